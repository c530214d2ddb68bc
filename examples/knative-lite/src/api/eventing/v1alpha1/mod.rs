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

//! eventing.knative.dev/v1alpha1: the API types of group `eventing`, version `v1alpha1`.

mod broker;
pub use broker::{Broker, BrokerSpec, BrokerStatus};
mod channel;
pub use channel::{Channel, ChannelSpec, ChannelStatus};
// +kbr:scaffold:kinds

/// Adds every kind of eventing.knative.dev/v1alpha1 to `scheme`.
pub fn add_to_scheme(scheme: &mut kbr_runtime::Scheme) {
    scheme.add::<Broker>();
    scheme.add::<Channel>();
    // +kbr:scaffold:scheme
}

// The types the kinds share with other code (not scaffolded).
pub use channel::{Addressable, ProvisionerReference};
