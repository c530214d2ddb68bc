//! `as=Table` answers: a `meta.k8s.io` `Table` (`columnDefinitions` and `rows`) of one object
//! or of a list, what `kubectl get` asks for.
//!
//! - Custom resources: a `Name` column, then the version's `additionalPrinterColumns` (an `Age`
//!   column when it declares none), each cell read with the column's JSONPath and typed as
//!   apiextensions-apiserver's `pkg/registry/customresource/tableconvertor/tableconvertor.go`
//!   does: an `integer` cell is a number, a `date` cell the age of the timestamp it names
//!   (`duration.HumanDuration`), a `string` cell the printed value, and a value of the wrong
//!   type or a path that finds nothing `null`.
//! - ConfigMaps, Secrets, ServiceAccounts, Namespaces, Services, Pods, Deployments,
//!   StatefulSets, DaemonSets, ReplicaSets, Jobs and CronJobs: kube-apiserver's printers
//!   (`pkg/printers/internalversion/printers.go`, in [`crate::handlers::printers`]), a row
//!   with `conditions` where the printer sets them (a finished Pod's).
//! - Other built-in kinds: apiserver's `pkg/registry/rest/table.go` `DefaultTableConvertor`:
//!   `Name` and `Created At` (RFC 3339). The real server has a printer for most of them
//!   (an Event's `Last Seen`, a Lease's `Holder`, ...), which the fake leaves out.
//!
//! Each row carries the object per the `includeObject` parameter: `Metadata` (the default) a
//! `PartialObjectMetadata`, `Object` the whole object, `None` nothing (apimachinery
//! `pkg/apis/meta/v1/types.go`, `TableOptions`; the check is apiserver
//! `pkg/endpoints/handlers/response.go`, `transformResponseObject`).

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::handlers::human_duration::age;
use crate::handlers::presented::Presented;
use crate::handlers::printers;
use crate::machinery::api_error::ApiError;
use crate::machinery::meta;
use crate::machinery::registry::{CREATION_TIMESTAMP_DOC, PrinterColumn, ResourceType};
use crate::rules::builtin::Kind;

/// The documentation of `metadata.name`, the `Name` column's description.
const NAME_DOC: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// What each row carries (`includeObject`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Include {
    /// `Metadata` (the default): a `PartialObjectMetadata`.
    Metadata,
    /// `Object`: the object.
    Object,
    /// `None`: `null`.
    Nothing,
}

/// A request for a Table: its `meta.k8s.io` version and what rows carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TableRequest {
    version: &'static str,
    include: Include,
}

impl TableRequest {
    /// The Table of version `version` (`v1`, `v1beta1`) with the `includeObject` parameter;
    /// 400 for another value of it.
    pub(crate) fn new(version: &'static str, include: Option<&str>) -> Result<Self, ApiError> {
        let include = match include.unwrap_or("") {
            "" | "Metadata" => Include::Metadata,
            "Object" => Include::Object,
            "None" => Include::Nothing,
            other => {
                return Err(ApiError::bad_request(format!(
                    "Unable to convert to Table as requested: includeObject: Invalid value: \"{other}\": must be 'Metadata', 'Object', 'None', or empty"
                )));
            }
        };
        Ok(Self { version, include })
    }

    /// The Table of one object (its `resourceVersion` as the Table's).
    pub(crate) fn object(&self, rt: &ResourceType, object: &Presented<'_>) -> Value {
        let rv = meta::text(object.object(), "resourceVersion").unwrap_or_default();
        self.table(
            rt,
            std::slice::from_ref(object),
            json!({"resourceVersion": rv}),
        )
    }

    /// The one-row Table a watch event carries: the object's, without `columnDefinitions`
    /// (`null`) unless `headers`.
    pub(crate) fn event(&self, rt: &ResourceType, object: &Presented<'_>, headers: bool) -> Value {
        let mut table = self.object(rt, object);
        if !headers {
            table["columnDefinitions"] = Value::Null;
        }
        table
    }

    /// The Table of a list, with the list's `metadata`.
    pub(crate) fn list(
        &self,
        rt: &ResourceType,
        items: &[Presented<'_>],
        metadata: Value,
    ) -> Value {
        self.table(rt, items, metadata)
    }

    fn table(&self, rt: &ResourceType, items: &[Presented<'_>], metadata: Value) -> Value {
        let printer = Printer::of(rt);
        let now = Timestamp::now();
        let rows: Vec<Value> = items
            .iter()
            .map(|item| {
                let obj = item.object();
                let object = match self.include {
                    Include::Metadata => json!({
                        "kind": "PartialObjectMetadata",
                        "apiVersion": format!("meta.k8s.io/{}", self.version),
                        "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
                    }),
                    Include::Object => serde_json::to_value(item).unwrap_or(Value::Null),
                    Include::Nothing => Value::Null,
                };
                let mut row = json!({"cells": printer.cells(obj, now), "object": object});
                if let Some(conditions) = printer.conditions(obj) {
                    row["conditions"] = conditions;
                }
                row
            })
            .collect();
        json!({
            "kind": "Table",
            "apiVersion": format!("meta.k8s.io/{}", self.version),
            "metadata": metadata,
            "columnDefinitions": printer.columns(),
            "rows": rows,
        })
    }
}

/// How a kind is printed.
enum Printer<'a> {
    /// A CRD version's columns after `Name`.
    Custom(&'a [PrinterColumn]),
    /// One of kube-apiserver's printers of built-in kinds.
    Builtin(Kind),
    /// `DefaultTableConvertor`.
    Default,
}

fn column(name: &str, type_: &str, format: &str, description: &str, priority: i32) -> Value {
    json!({"name": name, "type": type_, "format": format, "description": description,
           "priority": priority})
}

impl<'a> Printer<'a> {
    fn of(rt: &'a ResourceType) -> Self {
        if !rt.printer_columns.is_empty() {
            Self::Custom(&rt.printer_columns)
        } else if let Some(kind) = Kind::of(rt) {
            Self::Builtin(kind)
        } else {
            Self::Default
        }
    }

    fn columns(&self) -> Vec<Value> {
        let mut columns = vec![column("Name", "string", "name", NAME_DOC, 0)];
        match self {
            Self::Custom(custom) => columns.extend(
                custom
                    .iter()
                    .map(|c| column(&c.name, &c.type_, &c.format, &c.description, c.priority)),
            ),
            Self::Builtin(kind) => columns.extend(
                printers::columns(*kind)
                    .into_iter()
                    .map(|(name, type_, priority, doc)| column(name, type_, "", doc, priority)),
            ),
            Self::Default => {
                columns.push(column("Created At", "date", "", CREATION_TIMESTAMP_DOC, 0));
            }
        }
        columns
    }

    /// The row's `conditions` (`TableRowCondition`s), if the printer gives it any.
    fn conditions(&self, obj: &Value) -> Option<Value> {
        match self {
            Self::Builtin(kind) => printers::conditions(*kind, obj),
            Self::Custom(_) | Self::Default => None,
        }
    }

    fn cells(&self, obj: &Value, now: Timestamp) -> Vec<Value> {
        let mut cells = vec![json!(meta::name(obj))];
        let created = meta::text(obj, "creationTimestamp").unwrap_or_default();
        match self {
            Self::Custom(custom) => {
                cells.extend(custom.iter().map(|c| cell(c, find(obj, &c.json_path), now)));
            }
            Self::Builtin(kind) => {
                cells.extend(printers::cells(*kind, obj, age(created, now), now))
            }
            Self::Default => cells.push(json!(created)),
        }
        cells
    }
}

/// A CRD column's cell for `value` (`cellForJSONValue`; `string` columns print the value).
fn cell(column: &PrinterColumn, value: Option<&Value>, now: Timestamp) -> Value {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Value::Null;
    };
    match (column.type_.as_str(), value) {
        ("integer", Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .map_or(Value::Null, |i| json!(i)),
        ("number", Value::Number(n)) => n.as_f64().map_or(Value::Null, |f| json!(f)),
        ("boolean", Value::Bool(b)) => json!(b),
        ("date", Value::String(s)) => json!(age(s, now)),
        ("string", Value::String(s)) => json!(s),
        // The JSONPath printer writes any other value as text.
        ("string", other) => json!(other.to_string()),
        _ => Value::Null,
    }
}

/// The first value a simple JSONPath finds in `obj`: `.a.b`, `.a[0]`, `.a['b']` and filters
/// `[?(@.type=="Ready")]` (with or without the template's braces); `None` when it finds
/// nothing.
fn find<'v>(obj: &'v Value, path: &str) -> Option<&'v Value> {
    let path = path.trim();
    let path = path
        .strip_prefix('{')
        .and_then(|p| p.strip_suffix('}'))
        .unwrap_or(path);
    let mut current = obj;
    let mut rest = path.strip_prefix('$').unwrap_or(path);
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let (field, tail) = after.split_at(end);
            if !field.is_empty() {
                current = current.get(field)?;
            }
            rest = tail;
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let (inside, tail) = (&after[..end], &after[end + 1..]);
            current = step(current, inside)?;
            rest = tail;
        } else {
            return None;
        }
    }
    Some(current)
}

/// One `[...]` step: an index, a quoted key, or an equality filter on a list.
fn step<'v>(current: &'v Value, inside: &str) -> Option<&'v Value> {
    let unquote = |s: &str| s.trim().trim_matches(|c| c == '\'' || c == '"').to_owned();
    if let Some(filter) = inside.strip_prefix("?(").and_then(|f| f.strip_suffix(')')) {
        let (left, right) = filter.split_once("==")?;
        let key = left.trim().strip_prefix("@.")?;
        let wanted = unquote(right);
        return current.as_array()?.iter().find(|item| {
            find(item, &format!(".{key}")).is_some_and(|v| match v {
                Value::String(s) => *s == wanted,
                other => {
                    let text = other.to_string();
                    text == wanted
                }
            })
        });
    }
    match inside.trim().parse::<usize>() {
        Ok(index) => current.as_array()?.get(index),
        Err(_) => current.get(unquote(inside)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::find;

    #[test]
    fn simple_json_paths_find_the_first_value() {
        let obj = json!({"spec": {"replicas": 2, "ports": [{"port": 80}]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        assert_eq!(find(&obj, ".spec.replicas"), Some(&json!(2)));
        assert_eq!(find(&obj, "{.spec.ports[0].port}"), Some(&json!(80)));
        assert_eq!(
            find(&obj, r#".status.conditions[?(@.type=="Ready")].status"#),
            Some(&json!("True"))
        );
        assert_eq!(find(&obj, ".spec['replicas']"), Some(&json!(2)));
        assert_eq!(find(&obj, ".spec.missing"), None);
    }
}
