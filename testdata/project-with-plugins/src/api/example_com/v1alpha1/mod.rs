// Copyright 2026.
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

//! example.com.testproject.org/v1alpha1: the API types of group `example.com`, version `v1alpha1`.

mod memcached;
pub use memcached::{Memcached, MemcachedSpec, MemcachedStatus};
mod busybox;
pub use busybox::{Busybox, BusyboxSpec, BusyboxStatus};
// +kbr:scaffold:kinds

/// Adds every kind of example.com.testproject.org/v1alpha1 to `scheme`.
pub fn add_to_scheme(scheme: &mut kbr_runtime::Scheme) {
    scheme.add::<Memcached>();
    scheme.add::<Busybox>();
    // +kbr:scaffold:scheme
}
