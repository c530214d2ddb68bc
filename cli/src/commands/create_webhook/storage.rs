//! Marks the hub of a conversion as the storage version and its spokes as not stored, in their
//! API files (Kubebuilder adds `+kubebuilder:storageversion` to the hub's types).
//!
//! The derive stores every version unless told otherwise (`storage` defaults to true), so the
//! spokes get `#[kbr(storage = false)]` and the hub an explicit `#[kbr(storage)]`, on the line
//! above `pub struct <Kind>Spec`.

use super::error::CreateWebhookError;
use crate::names::resource::ResourceNames;
use crate::plan::PlanBuilder;

/// Plans the storage attributes of the `hub` and the `spokes`.
pub(super) fn mark(
    plan: &mut PlanBuilder,
    hub: &ResourceNames,
    spokes: &[ResourceNames],
) -> Result<(), CreateWebhookError> {
    mark_one(plan, hub, true)?;
    for spoke in spokes {
        mark_one(plan, spoke, false)?;
    }
    Ok(())
}

/// Marks the API file of `r` as the hub (the storage version) or as a spoke (not stored).
fn mark_one(
    plan: &mut PlanBuilder,
    r: &ResourceNames,
    hub: bool,
) -> Result<(), CreateWebhookError> {
    let path = format!("src/api/{}/{}/{}.rs", r.group_dir, r.version, r.kind_snake);
    let content = plan.content(&path)?.ok_or_else(|| {
        CreateWebhookError::Storage(format!(
            "cannot mark {} {}: {path} does not exist; restore it from version control",
            r.version,
            if hub {
                "as the storage version"
            } else {
                "as not stored"
            }
        ))
    })?;
    if let Some(updated) = with_storage(&content, &r.kind, hub)
        .map_err(|problem| CreateWebhookError::Storage(format!("{path}: {problem}")))?
    {
        plan.put(&path, updated)?;
    }
    Ok(())
}

/// `content` with the storage attribute added above `pub struct <kind>Spec`; `None` when it is
/// already there.
fn with_storage(content: &str, kind: &str, hub: bool) -> Result<Option<String>, String> {
    let spec = format!("pub struct {kind}Spec");
    let lines: Vec<&str> = content.split_inclusive('\n').collect();
    let Some(at) = lines.iter().position(|line| {
        line.trim_start()
            .strip_prefix(&spec)
            .is_some_and(|rest| rest.starts_with([' ', '{', '<']))
    }) else {
        return Err(format!(
            "cannot find `{spec}`; add #[kbr({})] to it by hand",
            if hub { "storage" } else { "storage = false" }
        ));
    };
    // The doc comment and attributes above the struct (multi-line attributes are indented).
    let mut start = at;
    while start > 0 {
        let line = lines[start - 1];
        let part_of_item = line.starts_with("#[")
            || line.starts_with("///")
            || line.starts_with(")]")
            || (line.starts_with(' ') && !line.trim().is_empty());
        if !part_of_item {
            break;
        }
        start -= 1;
    }
    let attributes: String = lines[start..at].concat();
    let not_stored = attributes.contains("storage = false");
    let stored = attributes.contains("storage)")
        || attributes.contains("storage,")
        || attributes.contains("storage = true");
    match (hub, not_stored, stored) {
        (true, true, _) => Err(format!(
            "{kind} is marked `storage = false` but becomes the hub (the storage version); remove that attribute first"
        )),
        (false, _, true) => Err(format!(
            "{kind} is marked as the storage version but becomes a spoke; remove that attribute first"
        )),
        (true, false, true) | (false, true, _) => Ok(None),
        (true, false, false) | (false, false, false) => {
            let attribute = if hub {
                "#[kbr(storage)]\n"
            } else {
                "#[kbr(storage = false)]\n"
            };
            let mut out = String::with_capacity(content.len() + attribute.len());
            out.extend(lines[..at].iter().copied());
            out.push_str(attribute);
            out.extend(lines[at..].iter().copied());
            Ok(Some(out))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const API: &str = "/// WidgetSpec defines the desired state of Widget.\n#[derive(Clone)]\n#[kbr(group = \"toys.example.com\", version = \"v1\")]\n#[kbr(\n    kind = \"Widget\",\n    plural = \"widgets\"\n)]\n#[serde(rename_all = \"camelCase\")]\npub struct WidgetSpec {\n    pub foo: i32,\n}\n";

    #[test]
    fn marks_spoke_and_hub_once() {
        let spoke = with_storage(API, "Widget", false).unwrap().unwrap();
        assert!(
            spoke.contains("#[kbr(storage = false)]\npub struct WidgetSpec {"),
            "{spoke}"
        );
        assert_eq!(with_storage(&spoke, "Widget", false).unwrap(), None);
        assert!(with_storage(&spoke, "Widget", true).is_err());
        let hub = with_storage(API, "Widget", true).unwrap().unwrap();
        assert!(
            hub.contains("#[kbr(storage)]\npub struct WidgetSpec {"),
            "{hub}"
        );
        assert_eq!(with_storage(&hub, "Widget", true).unwrap(), None);
        assert!(with_storage(&hub, "Widget", false).is_err());
        assert!(with_storage("fn main() {}\n", "Widget", true).is_err());
        // `WidgetSpecial` is not `WidgetSpec`.
        assert!(with_storage("pub struct WidgetSpecial {}\n", "Widget", true).is_err());
    }
}
