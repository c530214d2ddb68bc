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

//! Events the reconcilers record about the objects they change.

use kbr_runtime::events::{Event, EventRecorder, EventType};
use kbr_runtime::kube::Resource;

/// Records a `Normal` event about `obj` with `reason` (UpperCamelCase, e.g. `RevisionCreated`),
/// `action` (what was done, e.g. `Create`) and a human-readable `note`, when there is a
/// recorder (`None`, e.g. in tests: nothing is recorded). Failures to publish are logged by the
/// recorder, never returned: an Event is best effort, as with controller-runtime's
/// `record.EventRecorder`.
pub(crate) async fn record_normal<K>(
    recorder: Option<&EventRecorder>,
    obj: &K,
    reason: &str,
    note: &str,
    action: &str,
) where
    K: Resource<DynamicType = ()>,
{
    if let Some(recorder) = recorder {
        let event = Event {
            type_: EventType::Normal,
            reason: reason.into(),
            action: action.into(),
            note: Some(note.into()),
            secondary: None,
        };
        recorder.event(obj, &event).await;
    }
}
