use std::fs;

use super::*;
use crate::commands::alpha::scratch::read_tree;

/// Asserts `actual == expected`, naming the paths that differ (the trees are large).
fn assert_same_tree(actual: &Tree, expected: &Tree) {
    let differ: Vec<&String> = actual
        .keys()
        .chain(expected.keys())
        .filter(|path| actual.get(*path) != expected.get(*path))
        .collect();
    if let Some(first) = differ.first() {
        panic!(
            "trees differ at {differ:?}; {first}:\n--- rendered\n{}\n--- expected\n{}",
            actual.get(*first).map_or("(none)", String::as_str),
            expected.get(*first).map_or("(none)", String::as_str)
        );
    }
}

/// Runs `kbr args` in process in `dir`, with headers of 2026.
fn kbr(dir: &Path, args: &[&str]) {
    let cli = Cli::try_parse_from(std::iter::once("kbr").chain(args.iter().copied()))
        .unwrap_or_else(|err| panic!("{args:?}: {err}"));
    let env = Env {
        dir: dir.to_path_buf(),
        source_date_epoch: Some("1767225600".into()),
    };
    crate::run(cli, &env, &mut io::sink()).unwrap_or_else(|err| panic!("{args:?}: {err}"));
}

/// A project using every recorded flag, next to a stand-in kbr-runtime at `../runtime` (and
/// kbr-testing at `../testing`).
fn every_flag() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir(tmp.path().join("runtime")).unwrap();
    fs::write(tmp.path().join("runtime/Cargo.toml"), "[package]\n").unwrap();
    fs::create_dir(tmp.path().join("testing")).unwrap();
    fs::write(tmp.path().join("testing/Cargo.toml"), "[package]\n").unwrap();
    let dir = tmp.path().join("fleet");
    fs::create_dir(&dir).unwrap();
    fn api(rest: &[&'static str]) -> Vec<&'static str> {
        [&["create", "api"][..], rest].concat()
    }
    fn webhook(rest: &[&'static str]) -> Vec<&'static str> {
        [&["create", "webhook"][..], rest].concat()
    }
    let ship = [
        "--group",
        "ships",
        "--version",
        "v1beta1",
        "--kind",
        "Frigate",
    ];
    for args in [
        vec![
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "fleet",
            "--owner",
            "The Fleet's Owners",
            "--namespaced",
            "--runtime-path",
            "../runtime",
            "--plugins",
            "grafana",
        ],
        vec!["edit", "--plugins", "autoupdate"],
        api(&["--group", "crew", "--version", "v1", "--kind", "Captain"])
            .into_iter()
            .chain(["--plural", "captainz", "--namespaced=false"])
            .collect(),
        api(&["--group", "crew", "--version", "v2", "--kind", "Captain"])
            .into_iter()
            .chain(["--namespaced=false", "--controller=false"])
            .collect(),
        api(&["--group", "apps", "--version", "v1", "--kind", "Deployment"])
            .into_iter()
            .chain(["--resource=false"])
            .collect(),
        api(&ship),
        api(&[
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
        ])
        .into_iter()
        .chain([
            "--image",
            "memcached:1.6.26-alpine3.19",
            "--image-container-port",
        ])
        .chain([
            "11211",
            "--run-as-user",
            "1001",
            "--image-container-command",
        ])
        .chain(["memcached,--memory-limit=64,-o,modern,-v"])
        .collect(),
        // Webhooks in PROJECT order: the replay cannot know another order (see commands()).
        webhook(&["--group", "crew", "--version", "v1", "--kind", "Captain"])
            .into_iter()
            .chain(["--conversion", "--spoke", "v2"])
            .collect(),
        webhook(&ship).into_iter().chain(["--defaulting"]).collect(),
        webhook(&ship)
            .into_iter()
            .chain(["--programmatic-validation", "--force"])
            .collect(),
    ] {
        kbr(&dir, &args);
    }
    (tmp, dir)
}

#[test]
fn commands_pass_only_what_differs_from_the_defaults() {
    let (_tmp, dir) = every_flag();
    let (project, _) = crate::commands::create::read_project(&dir).unwrap();
    let commands: Vec<String> = commands(&project).iter().map(|c| command_line(c)).collect();
    assert_eq!(
        commands,
        [
            "init --domain=example.com --project-name=fleet '--owner=The Fleet'\\''s Owners' --namespaced --plugins=autoupdate,grafana --runtime-path=../runtime",
            "create api --group=crew --version=v1 --kind=Captain --plural=captainz --namespaced=false",
            "create api --group=crew --version=v2 --kind=Captain --plural=captainz --namespaced=false --controller=false",
            "create api --group=apps --version=v1 --kind=Deployment --resource=false",
            "create api --group=ships --version=v1beta1 --kind=Frigate --plural=frigates",
            "create api --group=cache --version=v1alpha1 --kind=Memcached --plural=memcacheds --image=memcached:1.6.26-alpine3.19 --image-container-port=11211 --image-container-command=memcached,--memory-limit=64,-o,modern,-v --run-as-user=1001",
            "create webhook --group=crew --version=v1 --kind=Captain --conversion --spoke=v2",
            "create webhook --group=ships --version=v1beta1 --kind=Frigate --defaulting --programmatic-validation",
        ]
    );
}

/// The replay is complete: rendering PROJECT again gives every file byte for byte, PROJECT
/// included (so every recorded flag was passed).
#[test]
fn replay_reproduces_the_project() {
    let (tmp, dir) = every_flag();
    let (project, _) = crate::commands::create::read_project(&dir).unwrap();
    let rendered = Scaffolder::Current
        .render(&project, &dir, Some("1767225600"))
        .unwrap();
    assert_same_tree(&rendered, &read_tree(&dir).unwrap());
    // The scratch directory beside the project is gone: runtime, testing and the project remain.
    let siblings: Vec<_> = fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(siblings.len(), 3, "{siblings:?}");
}

#[test]
fn replay_without_license_or_runtime_path() {
    let tmp = tempfile::tempdir().unwrap();
    kbr(
        tmp.path(),
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "plain",
            "--license",
            "none",
            "--runtime-version",
            "0.1.0",
        ],
    );
    kbr(
        tmp.path(),
        &[
            "create",
            "api",
            "--group",
            "a-b.c",
            "--version",
            "v10",
            "--kind",
            "Long",
        ],
    );
    let (project, _) = crate::commands::create::read_project(tmp.path()).unwrap();
    assert_eq!(
        command_line(&init(&project)),
        "init --domain=example.com --project-name=plain --license=none --runtime-version=0.1.0"
    );
    // Another year: no header to show it.
    let rendered = Scaffolder::Current
        .render(&project, tmp.path(), None)
        .unwrap();
    assert_same_tree(&rendered, &read_tree(tmp.path()).unwrap());
}

#[test]
fn a_failing_command_is_named_with_its_kbr() {
    let tmp = tempfile::tempdir().unwrap();
    kbr(
        tmp.path(),
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "moved",
            "--runtime-version",
            "0.1.0",
        ],
    );
    // A project whose absolute runtime path holds no crate: kbr init refuses it.
    let (project, _) = crate::commands::create::read_project(tmp.path()).unwrap();
    let project = Project {
        runtime: Runtime::Path("/no/such/runtime".into()),
        ..project
    };
    let err = Scaffolder::Current
        .render(&project, tmp.path(), None)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("replaying `kbr init --domain=example.com --project-name=moved "),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "with kbr {KBR_VERSION} (this binary) failed: invalid runtime path \"/no/such/runtime\""
        )),
        "{err}"
    );
    assert!(!err.contains('\n'), "{err}");

    let missing = Scaffolder::Binary(tmp.path().join("no-kbr"));
    let err = missing.render(&project, tmp.path(), None).unwrap_err();
    assert!(matches!(err, ReplayError::Spawn { .. }), "{err}");
}

#[test]
fn a_project_moved_away_from_its_relative_runtime_renders_as_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    kbr(
        tmp.path(),
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "moved",
            "--runtime-version",
            "0.1.0",
        ],
    );
    let (project, _) = crate::commands::create::read_project(tmp.path()).unwrap();
    for path in ["../../runtime", "../a/../runtime"] {
        let project = Project {
            runtime: Runtime::Path(path.into()),
            ..project.clone()
        };
        assert_eq!(
            super::super::missing_runtime(&project, tmp.path()),
            Some(path)
        );
        let rendered = Scaffolder::Current
            .render(&project, tmp.path(), None)
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let manifest = &rendered["Cargo.toml"];
        assert!(
            manifest.contains(&format!("kbr-runtime = {{ path = \"{path}\"")),
            "{path}: {manifest}"
        );
        assert!(
            rendered["PROJECT"].contains(&format!("path: {path}")),
            "{path}"
        );
        // The stand-in runtime is not part of the project.
        assert!(
            rendered.keys().all(|file| !file.contains("runtime")),
            "{path}: {:?}",
            rendered.keys().collect::<Vec<_>>()
        );
    }
}
