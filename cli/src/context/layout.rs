//! [`Layout`]: the shape rustfmt gives lines whose width depends on user-chosen names.
//!
//! rustfmt (default `max_width` 100) keeps a construct on one line when it fits and breaks it in
//! a fixed way when it does not. For the few generated lines that grow with a kind, group or
//! version name, kbr measures the one-line form here and the template writes whichever shape
//! rustfmt would, so long names stay rustfmt-clean too. Other name-dependent lines are built
//! short by construction (a `let` per value) or cannot be broken (single paths, which rustfmt
//! leaves as they are).

/// rustfmt's default `max_width`.
pub const MAX_WIDTH: usize = 100;

/// rustfmt's default `attr_fn_like_width`: the widest argument list an attribute such as
/// `#[kbr(...)]` keeps on one line.
pub const ATTR_ARGS_WIDTH: usize = 70;

/// Layout decisions for one resource's templates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// `#[kbr(group = "…", version = "…")]` fits on one line; else one key per line.
    pub kbr_group_one_line: bool,
    /// `#[kbr(kind = "…", plural = "…")]` fits on one line; else one key per line.
    pub kbr_kind_one_line: bool,
    /// `#[kbr(namespaced, status = "…Status")]` fits on one line; else one key per line.
    pub kbr_status_one_line: bool,
    /// `pub use <kind>::{Kind, KindSpec, KindStatus};` fits on one line.
    pub reexport_one_line: bool,
    /// Else the names in rustfmt's mixed layout: lines of names, each line indented by four
    /// spaces and ending with a comma.
    pub reexport_lines: Vec<Vec<String>>,
    /// `async fn reconcile(&self, <var>: Arc<<version>::<Kind>>) -> Result<Action, Error> {` fits
    /// on one line; else one parameter per line.
    pub reconcile_one_line: bool,
    /// The test's `let spec = <version>::<Kind>Spec::default();` fits on one line; else the
    /// value goes on the next line.
    pub test_spec_one_line: bool,
    /// The test's `let [mut] resource = <version>::<Kind>::new("test-resource", spec);` fits on
    /// one line; else the value goes on the next line (rustfmt-clean up to a version and kind
    /// of 60 characters together).
    pub test_new_one_line: bool,
    /// The test's `let reconciler = <Kind>Reconciler { client };` fits on one line; else the
    /// value goes on the next line.
    pub test_reconciler_one_line: bool,
}

/// The names a resource's templates print, for measuring.
#[derive(Debug, Clone, Copy)]
pub struct Names<'a> {
    /// `<group>.<domain>`.
    pub qualified_group: &'a str,
    /// The version.
    pub version: &'a str,
    /// The kind.
    pub kind: &'a str,
    /// The plural.
    pub plural: &'a str,
    /// The kind's module identifier.
    pub kind_module: &'a str,
    /// The object variable of the reconciler.
    pub var: &'a str,
    /// Whether the kind is namespaced.
    pub namespaced: bool,
}

/// Whether `#[<name>(<args>)]` stays on one line, `args` being the argument strings.
fn attr_one_line(name: &str, args: &[&str]) -> bool {
    let args = width(args);
    args <= ATTR_ARGS_WIDTH && "#[(".len() + name.len() + args + ")]".len() <= MAX_WIDTH
}

/// The width of `parts` written one after another.
fn width(parts: &[&str]) -> usize {
    parts.iter().map(|part| part.len()).sum()
}

impl Layout {
    /// Measures the lines of `names`.
    pub fn new(names: Names<'_>) -> Self {
        let Names {
            qualified_group,
            version,
            kind,
            plural,
            kind_module,
            var,
            namespaced,
        } = names;
        let status = format!("{kind}Status");
        let reexports = [
            kind.to_owned(),
            format!("{kind}Spec"),
            format!("{kind}Status"),
        ];
        let reexport_list = reexports.iter().map(|name| name.len()).sum::<usize>() + 2 * 2;
        Self {
            kbr_group_one_line: attr_one_line(
                "kbr",
                &[
                    "group = \"",
                    qualified_group,
                    "\", version = \"",
                    version,
                    "\"",
                ],
            ),
            kbr_kind_one_line: attr_one_line(
                "kbr",
                &["kind = \"", kind, "\", plural = \"", plural, "\""],
            ),
            kbr_status_one_line: attr_one_line(
                "kbr",
                &[
                    if namespaced { "namespaced, " } else { "" },
                    "status = \"",
                    &status,
                    "\"",
                ],
            ),
            reexport_one_line: width(&["pub use ", kind_module, "::{", "};"]) + reexport_list
                <= MAX_WIDTH,
            reexport_lines: mixed(&reexports, 4),
            reconcile_one_line: width(&[
                "    async fn reconcile(&self, ",
                var,
                ": Arc<",
                version,
                "::",
                kind,
                ">) -> Result<Action, Error> {",
            ]) <= MAX_WIDTH,
            test_spec_one_line: width(&[
                "    let spec = ",
                version,
                "::",
                kind,
                "Spec::default();",
            ]) <= MAX_WIDTH,
            test_new_one_line: width(&[
                if namespaced {
                    "    let mut resource = "
                } else {
                    "    let resource = "
                },
                version,
                "::",
                kind,
                "::new(\"test-resource\", spec);",
            ]) <= MAX_WIDTH,
            test_reconciler_one_line: width(&[
                "    let reconciler = ",
                kind,
                "Reconciler { client };",
            ]) <= MAX_WIDTH,
        }
    }
}

/// rustfmt's mixed list layout: as many `items` per line as fit at `indent`, each line ending
/// with a comma.
fn mixed(items: &[String], indent: usize) -> Vec<Vec<String>> {
    let mut lines: Vec<Vec<String>> = Vec::new();
    let mut line_width = indent;
    for item in items {
        // ", item" after the first item of a line; every line ends with ",".
        let added = if line_width == indent {
            item.len() + 1
        } else {
            item.len() + 2
        };
        match lines.last_mut() {
            Some(line) if line_width + added <= MAX_WIDTH => {
                line.push(item.clone());
                line_width += added;
            }
            _ => {
                lines.push(vec![item.clone()]);
                line_width = indent + item.len() + 1;
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names<'a>(kind: &'a str, module: &'a str, var: &'a str) -> Names<'a> {
        Names {
            qualified_group: "eventing.knative.dev",
            version: "v1alpha1",
            kind,
            plural: "brokers",
            kind_module: module,
            var,
            namespaced: true,
        }
    }

    #[test]
    fn short_names_stay_on_one_line() {
        let layout = Layout::new(names("Broker", "broker", "broker"));
        assert!(layout.kbr_group_one_line && layout.kbr_kind_one_line);
        assert!(layout.reexport_one_line && layout.reconcile_one_line);
    }

    #[test]
    fn long_names_break_like_rustfmt() {
        let kind = "ClusterChannelProvisioner";
        let module = "cluster_channel_provisioner";
        let layout = Layout::new(Names {
            plural: "clusterchannelprovisioners",
            ..names(kind, module, module)
        });
        assert!(!layout.reexport_one_line);
        assert_eq!(
            layout.reexport_lines,
            [[
                "ClusterChannelProvisioner",
                "ClusterChannelProvisionerSpec",
                "ClusterChannelProvisionerStatus"
            ]]
        );
        assert!(!layout.reconcile_one_line);
        // rustfmt's attr_fn_like_width (70), not max_width, breaks this one.
        assert!(!layout.kbr_kind_one_line);
        assert!(layout.kbr_status_one_line);
        let kind = "A".repeat(40);
        let layout = Layout::new(names(&kind, "a", "a"));
        assert_eq!(layout.reexport_lines.len(), 2);
        assert_eq!(layout.reexport_lines[0].len(), 2);
    }
}
