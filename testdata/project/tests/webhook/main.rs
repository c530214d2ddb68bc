// Copyright 2026 The kbr authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The webhook test suite: one module per kind with webhooks, calling its defaulter, validator
//! and conversion directly and through an API server with the webhooks registered (the
//! in-process fake API server, or envtest when `KUBEBUILDER_ASSETS` is set).
//!
//! All kinds share this one test binary, like the webhook suite of a Kubebuilder project.
//! `kbr create webhook` adds a module here.

mod captain;
mod pod;
// +kbr:scaffold:tests
