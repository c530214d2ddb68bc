//! No circles between the files of a module, in any crate of the workspace (DESIGN §5: "Inside a
//! module, files do not import each other in a circle either: put the shared type in a file both
//! use").
//!
//! Every module is a graph: its own file (`mod.rs`, `lib.rs`, or `name.rs` beside `name/`) and
//! each of its child modules (a file, or a folder with everything below it) are the nodes. A
//! file's non-test code that names a path into another node adds an edge from the node holding
//! the file to that node: `super::validation::FieldError` from `crd/structural/rules.rs` is an
//! edge `rules -> validation` in `crd::structural`; `super::Cache` from `cache/informer.rs` an
//! edge `informer -> (cache's own file)`, or `informer -> C` when the module's file only
//! re-exports `Cache` from its child `C`; `use license::Text` in `context/mod.rs` an edge
//! `(context's own file) -> license`. A module's own re-exports (`pub use child::X`) make no
//! edge: they are its public face, not a use. Paths are read from `crate::`, `$crate::`, the
//! crate's own name, `self::`, `super::` and, in a module's own file, its children's names.
//! A strongly connected component of two or more nodes is a circle, and fails the test with
//! the lines that make it.

mod source_scan;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use source_scan::{Token, is_ident, is_punct, is_test_cfg, skip_group, skip_item, sources};
use source_scan::{module_path, strip_comments_and_literals, test_modules, tokenize};

/// A module path from the crate root (`["crd", "structural"]`).
type ModulePath = Vec<String>;

/// A node of a module's graph: its own file, or one of its children.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Node {
    Own,
    Child(String),
}

impl std::fmt::Display for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Node::Own => write!(f, "(own file)"),
            Node::Child(name) => write!(f, "{name}"),
        }
    }
}

/// One use of a path: where, and the absolute path it names.
#[derive(Debug)]
struct Use {
    line: usize,
    target: ModulePath,
    /// Inside a `pub … use` statement (a re-export).
    reexport: bool,
}

/// Every path a path expression or `use` tree starting at `i` names, as segment lists (a
/// `{a::b, c}` group gives one per entry; `self` in a group names the prefix itself).
fn expand(tokens: &[(Token, usize)], mut i: usize, prefix: &[String]) -> Vec<ModulePath> {
    let mut path = prefix.to_vec();
    loop {
        match tokens.get(i) {
            Some((Token::Ident(name), _)) if name != "self" || path.len() == prefix.len() => {
                if name != "self" {
                    path.push(name.clone());
                }
                if matches!(tokens.get(i + 1), Some((Token::PathSep, _))) {
                    i += 2;
                    continue;
                }
                return vec![path];
            }
            Some((Token::Punct('{'), _)) => {
                let end = skip_group(tokens, i).saturating_sub(1);
                let mut paths = Vec::new();
                let mut entry = i + 1;
                let mut depth = 0usize;
                for k in i + 1..=end {
                    match tokens.get(k).map(|t| &t.0) {
                        Some(Token::Punct('{')) => depth += 1,
                        Some(Token::Punct('}')) if depth > 0 => depth -= 1,
                        Some(Token::Punct(',')) | Some(Token::Punct('}')) if depth == 0 => {
                            if entry < k {
                                paths.extend(expand(tokens, entry, &path));
                            }
                            entry = k + 1;
                        }
                        _ => {}
                    }
                }
                return paths;
            }
            _ => return vec![path],
        }
    }
}

/// Every path a file's non-test code names inside the crate, made absolute. `module` is the
/// file's module path, `children` the names of its child modules, `crate_name` the crate's
/// name as other crates spell it.
fn uses(
    source: &str,
    module: &[String],
    children: &BTreeSet<String>,
    crate_name: &str,
) -> Vec<Use> {
    let tokens = tokenize(&strip_comments_and_literals(source));
    let mut found = Vec::new();
    // The `pub … use` statement being read, as the index of its `;`.
    let mut reexport_until = 0;
    // The module the code at `i` is in: the file's, and the inline `mod name { … }` blocks
    // around it, each with the brace depth inside it.
    let mut here = module.to_vec();
    let (mut braces, mut inline) = (0usize, Vec::<usize>::new());
    let mut i = 0;
    while i < tokens.len() {
        let after_path_sep = i > 0 && matches!(tokens[i - 1].0, Token::PathSep);
        let line = tokens[i].1;
        match &tokens[i].0 {
            Token::Punct('{') => braces += 1,
            Token::Punct('}') => {
                if inline.last() == Some(&braces) {
                    inline.pop();
                    here.pop();
                }
                braces = braces.saturating_sub(1);
            }
            Token::Ident(kw) if kw == "mod" && is_punct(tokens.get(i + 2), '{') => {
                if let Some((Token::Ident(name), _)) = tokens.get(i + 1) {
                    here.push(name.clone());
                    inline.push(braces + 1);
                }
            }
            Token::Punct('#') if is_punct(tokens.get(i + 1), '[') => {
                let end = skip_group(&tokens, i + 1);
                i = if is_test_cfg(&tokens[i + 2..end.saturating_sub(1)]) {
                    skip_item(&tokens, end)
                } else {
                    end
                };
                continue;
            }
            Token::Ident(kw) if kw == "use" && is_pub(&tokens, i) => {
                reexport_until = tokens[i..]
                    .iter()
                    .position(|(t, _)| *t == Token::Punct(';'))
                    .map_or(tokens.len(), |p| i + p);
            }
            Token::Ident(root)
                if !after_path_sep && matches!(tokens.get(i + 1), Some((Token::PathSep, _))) =>
            {
                let base: Option<ModulePath> = match root.as_str() {
                    "crate" | "$crate" => Some(Vec::new()),
                    name if name == crate_name => Some(Vec::new()),
                    "self" => Some(here.clone()),
                    "super" => {
                        let mut j = i;
                        let mut up = 0;
                        while is_ident(tokens.get(j), "super")
                            && matches!(tokens.get(j + 1), Some((Token::PathSep, _)))
                        {
                            up += 1;
                            j += 2;
                        }
                        let base = here[..here.len().saturating_sub(up)].to_vec();
                        for target in expand(&tokens, j, &base) {
                            found.push(Use {
                                line,
                                target,
                                reexport: i < reexport_until,
                            });
                        }
                        i = j;
                        continue;
                    }
                    name if inline.is_empty() && children.contains(name) => {
                        for target in expand(&tokens, i, module) {
                            found.push(Use {
                                line,
                                target,
                                reexport: i < reexport_until,
                            });
                        }
                        i = skip_path(&tokens, i);
                        continue;
                    }
                    _ => None,
                };
                if let Some(base) = base {
                    for target in expand(&tokens, i + 2, &base) {
                        found.push(Use {
                            line,
                            target,
                            reexport: i < reexport_until,
                        });
                    }
                    i = skip_path(&tokens, i);
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// Whether the `use` at `i` is a re-export: `pub use`, `pub(crate) use`, `pub(super) use`.
fn is_pub(tokens: &[(Token, usize)], i: usize) -> bool {
    match i.checked_sub(1).map(|p| &tokens[p].0) {
        Some(Token::Ident(kw)) => kw == "pub",
        Some(Token::Punct(')')) => (0..i)
            .rev()
            .find(|&k| tokens[k].0 == Token::Punct('('))
            .is_some_and(|open| is_ident(open.checked_sub(1).map(|p| &tokens[p]), "pub")),
        _ => false,
    }
}

/// The index past the path (identifiers, `::` and a `{…}` group) starting at `i`.
fn skip_path(tokens: &[(Token, usize)], mut i: usize) -> usize {
    while i < tokens.len() {
        match tokens[i].0 {
            Token::Ident(_) | Token::PathSep => i += 1,
            Token::Punct('{') => return skip_group(tokens, i),
            _ => break,
        }
    }
    i
}

/// A crate read for the check: every module's file and the children each module has.
struct Crate {
    name: String,
    files: Vec<(PathBuf, ModulePath, String)>,
    children: BTreeMap<ModulePath, BTreeSet<String>>,
}

impl Crate {
    /// The crate whose root is `src/<root>` (`lib.rs`, or `main.rs` for a binary-only
    /// package); other binaries (`main.rs` beside `lib.rs`, `bin/`) are crates of their own.
    fn read(name: &str, src: &Path, root: &str) -> Self {
        let files: Vec<(PathBuf, ModulePath, String)> = sources(src)
            .into_iter()
            .filter(|(path, _)| {
                let other_root =
                    matches!(path.to_str(), Some("main.rs" | "lib.rs")) && path != Path::new(root);
                !other_root && !path.starts_with("bin")
            })
            .map(|(path, text)| {
                let module = if path == Path::new(root) {
                    Vec::new()
                } else {
                    module_path(&path)
                };
                (path, module, text)
            })
            .collect();
        Self::from_files(name, files)
    }

    fn from_files(name: &str, mut files: Vec<(PathBuf, ModulePath, String)>) -> Self {
        // Modules declared `#[cfg(test)] mod tests;` are unit tests, as `#[cfg(test)]` items are.
        let tests: Vec<ModulePath> = files
            .iter()
            .flat_map(|(_, module, text)| {
                test_modules(text).into_iter().map(move |child| {
                    let mut path = module.clone();
                    path.push(child);
                    path
                })
            })
            .collect();
        files.retain(|(_, module, _)| !tests.iter().any(|test| module.starts_with(test)));
        let mut children: BTreeMap<ModulePath, BTreeSet<String>> = BTreeMap::new();
        for (_, module, _) in &files {
            for depth in 0..module.len() {
                children
                    .entry(module[..depth].to_vec())
                    .or_default()
                    .insert(module[depth].clone());
            }
        }
        Self {
            name: name.to_owned(),
            files,
            children,
        }
    }

    fn children_of(&self, module: &[String]) -> BTreeSet<String> {
        self.children.get(module).cloned().unwrap_or_default()
    }

    /// Every name a module's own file re-exports, with the absolute path it stands for.
    fn reexports(&self) -> BTreeMap<ModulePath, BTreeMap<String, ModulePath>> {
        let mut all: BTreeMap<ModulePath, BTreeMap<String, ModulePath>> = BTreeMap::new();
        for (_, module, text) in &self.files {
            let children = self.children_of(module);
            for used in uses(text, module, &children, &self.name) {
                if let (true, Some(last)) = (used.reexport, used.target.last()) {
                    all.entry(module.clone())
                        .or_default()
                        .insert(last.clone(), used.target.clone());
                }
            }
        }
        all
    }

    /// Every edge of every module's graph: (module, from, to) -> the `file:line`s making it.
    fn edges(&self) -> BTreeMap<(ModulePath, Node, Node), Vec<String>> {
        let reexports = self.reexports();
        let mut edges: BTreeMap<(ModulePath, Node, Node), Vec<String>> = BTreeMap::new();
        for (path, module, text) in &self.files {
            let children = self.children_of(module);
            for used in uses(text, module, &children, &self.name) {
                if used.reexport && used.target.starts_with(module) {
                    continue; // the module's public face
                }
                let Some((parent, from, to)) = self.edge(module, &used.target, &reexports) else {
                    continue;
                };
                let place = format!("{}:{}", path.display(), used.line);
                let places = edges.entry((parent, from, to)).or_default();
                if !places.contains(&place) {
                    places.push(place);
                }
            }
        }
        edges
    }

    /// The edge a use of `target` from the file of `module` adds, if it leaves its node.
    fn edge(
        &self,
        module: &[String],
        target: &[String],
        reexports: &BTreeMap<ModulePath, BTreeMap<String, ModulePath>>,
    ) -> Option<(ModulePath, Node, Node)> {
        let mut target = target.to_vec();
        for _ in 0..8 {
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            let parent = module[..common].to_vec();
            let children = self.children_of(&parent);
            let from = match module.get(common) {
                Some(child) => Node::Child(child.clone()),
                None => Node::Own,
            };
            let to = match target.get(common) {
                Some(name) if children.contains(name) => Node::Child(name.clone()),
                Some(name) => match reexports.get(&parent).and_then(|r| r.get(name)) {
                    Some(source) if source.as_slice() != target.as_slice() => {
                        // `parent` re-exports `name`: follow it to where it is defined.
                        let mut followed = source.clone();
                        followed.extend(target[common + 1..].iter().cloned());
                        target = followed;
                        continue;
                    }
                    _ => Node::Own,
                },
                None => Node::Own,
            };
            return (from != to).then_some((parent, from, to));
        }
        None
    }

    /// Every circle: per module, each strongly connected component of two or more nodes, with
    /// the edges inside it.
    fn circles(&self) -> Vec<(String, String)> {
        let edges = self.edges();
        let mut by_module: BTreeMap<&ModulePath, Vec<(&Node, &Node)>> = BTreeMap::new();
        for (module, from, to) in edges.keys() {
            by_module.entry(module).or_default().push((from, to));
        }
        let mut circles = Vec::new();
        for (module, pairs) in by_module {
            for component in components(&pairs) {
                let mut lines = Vec::new();
                for ((m, from, to), places) in &edges {
                    if m == module && component.contains(from) && component.contains(to) {
                        lines.push(format!("  {from} -> {to}: {}", places.join(", ")));
                    }
                }
                let name = if module.is_empty() {
                    self.name.clone()
                } else {
                    format!("{}::{}", self.name, module.join("::"))
                };
                let text = format!("circle in `{name}`:\n{}", lines.join("\n"));
                circles.push((name, text));
            }
        }
        circles
    }
}

/// The strongly connected components of two or more nodes of a graph given by its edges.
fn components<'a>(edges: &[(&'a Node, &'a Node)]) -> Vec<BTreeSet<&'a Node>> {
    let nodes: BTreeSet<&Node> = edges.iter().flat_map(|(a, b)| [*a, *b]).collect();
    let reaches = |start: &'a Node| {
        let mut seen = BTreeSet::from([start]);
        let mut stack = vec![start];
        while let Some(node) = stack.pop() {
            for (from, to) in edges {
                if *from == node && seen.insert(*to) {
                    stack.push(to);
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&Node, BTreeSet<&Node>> = nodes.iter().map(|n| (*n, reaches(n))).collect();
    let mut done = BTreeSet::new();
    let mut found = Vec::new();
    for node in &nodes {
        if done.contains(node) {
            continue;
        }
        let component: BTreeSet<&Node> = reach[node]
            .iter()
            .filter(|other| reach[*other].contains(node))
            .copied()
            .collect();
        done.extend(component.iter().copied());
        if component.len() > 1 {
            found.push(component);
        }
    }
    found
}

#[test]
fn no_crate_has_files_importing_each_other_in_a_circle() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let crates = [
        ("kbr_core", "core", "lib.rs"),
        ("kbr", "cli", "lib.rs"),
        ("kbr_derive", "derive", "lib.rs"),
        ("kbr_crd", "crd", "lib.rs"),
        ("kbr_runtime", "runtime", "lib.rs"),
        ("kbr_testing", "testing", "lib.rs"),
        ("kbr_bench", "bench", "main.rs"),
    ];
    let mut circles = Vec::new();
    for (name, dir, root) in crates {
        circles.extend(Crate::read(name, &workspace.join(dir).join("src"), root).circles());
    }
    let found: Vec<&str> = circles.iter().map(|(_, text)| text.as_str()).collect();
    assert!(
        found.is_empty(),
        "files import each other in a circle; move what they share into a file both use:\n{}",
        found.join("\n")
    );
}

/// A crate of the given files (paths relative to `src`) for the check's own tests.
fn toy(files: &[(&str, &str)]) -> Vec<String> {
    let files = files
        .iter()
        .map(|(path, text)| {
            (
                PathBuf::from(path),
                module_path(Path::new(path)),
                (*text).to_owned(),
            )
        })
        .collect();
    Crate::from_files("toy", files)
        .circles()
        .into_iter()
        .map(|(_, text)| text)
        .collect()
}

#[test]
fn siblings_using_each_other_are_a_circle() {
    let circles = toy(&[
        ("lib.rs", "mod cache;"),
        ("cache/mod.rs", "mod index;\nmod informer;\n"),
        ("cache/index.rs", "use super::informer::Informer;"),
        (
            "cache/informer.rs",
            "\nuse crate::cache::index::{Index, IndexFn};",
        ),
    ]);
    assert_eq!(
        circles,
        vec![
            "circle in `toy::cache`:\n  index -> informer: cache/index.rs:1\n  informer -> index: cache/informer.rs:2"
                .to_owned()
        ]
    );
}

#[test]
fn a_module_file_and_its_children_in_a_circle() {
    // context/mod.rs -> license.rs -> templates.rs -> context's own items.
    let circles = toy(&[
        ("lib.rs", "mod context;"),
        (
            "context/mod.rs",
            "mod license;\nmod templates;\npub struct Context;\nfn f() { license::text(); }",
        ),
        ("context/license.rs", "use super::templates::render;"),
        ("context/templates.rs", "use super::Context;"),
    ]);
    assert_eq!(circles.len(), 1, "{circles:?}");
    assert!(
        circles[0].contains("(own file) -> license: context/mod.rs:4"),
        "{circles:?}"
    );
}

#[test]
fn reexports_shared_files_and_tests_make_no_circle() {
    let circles = toy(&[
        ("lib.rs", "pub mod cache;\npub use cache::Cache;"),
        // The module's file re-exports; its children use each other only through `types`.
        (
            "cache/mod.rs",
            "mod informer;\nmod store;\nmod types;\npub use informer::Informer;\npub(crate) use types::{Key, Object};",
        ),
        ("cache/types.rs", "pub struct Key;"),
        (
            "cache/store.rs",
            "use super::Key;\nuse crate::cache::types::Object;",
        ),
        (
            "cache/informer.rs",
            "use super::store::Store;\n#[cfg(test)]\nmod tests { use super::super::Informer; }",
        ),
        // A top-level module using another through the crate's re-export, one way only.
        ("client.rs", "use crate::Cache;"),
    ]);
    assert_eq!(circles, Vec::<String>::new());
}

#[test]
fn super_in_an_inline_module_is_its_file() {
    let circles = toy(&[
        (
            "lib.rs",
            "mod controllers;\nmod converge;\nfn main() { controllers::run(); }",
        ),
        (
            "controllers.rs",
            "pub fn run() {}\nmod kbr {\n    use super::*;\n}",
        ),
        ("converge.rs", "use super::controllers::run;"),
    ]);
    assert_eq!(circles, Vec::<String>::new());
}

#[test]
fn a_circle_through_a_reexport_is_found() {
    let circles = toy(&[
        ("lib.rs", "mod cache;"),
        (
            "cache/mod.rs",
            "mod index;\nmod informer;\npub(crate) use informer::Informer;",
        ),
        ("cache/index.rs", "use super::Informer;"),
        ("cache/informer.rs", "use super::index::IndexFn;"),
    ]);
    assert_eq!(circles.len(), 1, "{circles:?}");
}
