//! The generated Rust is formatted as rustfmt would, and (ignored by default: slow, needs the
//! workspace runtime to build) compiles, lints and passes its tests.
//!
//! Run the slow checks with `cargo test -p kbr --test generated_code -- --ignored`.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::*;

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<String> {
    snapshot(dir)
        .into_iter()
        .filter(|(path, content)| path.ends_with(".rs") && content.is_some())
        .map(|(path, _)| path)
        .collect()
}

fn assert_rustfmt_clean(dir: &Path) {
    let files = rust_files(dir);
    assert!(!files.is_empty());
    let out = Command::new("rustfmt")
        .args(["--check", "--edition", "2024"])
        .args(&files)
        .current_dir(dir)
        .output()
        .expect("rustfmt is installed (rustup component add rustfmt)");
    assert!(
        out.status.success(),
        "rustfmt would change generated code:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn init_alone_is_rustfmt_clean() {
    let (_tmp, dir) = init_knative();
    assert_rustfmt_clean(&dir);
}

#[test]
fn knative_is_rustfmt_clean() {
    let (_tmp, dir) = init_knative();
    for api in KNATIVE_APIS {
        assert_eq!(create_api(&dir, api, &[]).code, 0);
    }
    assert_rustfmt_clean(&dir);
}

#[test]
fn tricky_names_are_rustfmt_clean() {
    let (_tmp, dir) = tricky_project(&["--runtime-version", "0.1.0", "--namespaced"]);
    assert_rustfmt_clean(&dir);
}

/// With `--sharding` (issue 27): the sharding registry in `src/lib.rs`, the wrapped reconcilers
/// and the three-replica test in `tests/controller/main.rs`.
#[test]
fn tricky_names_with_sharding_are_rustfmt_clean() {
    let (_tmp, dir) = tricky_project(&["--runtime-version", "0.1.0", "--sharding"]);
    assert_rustfmt_clean(&dir);
}

#[test]
fn tricky_kinds_are_spelled_unambiguously() {
    let (_tmp, dir) = tricky_project(&["--runtime-version", "0.1.0"]);
    let read = |path: &str| std::fs::read_to_string(dir.join(path)).expect(path);
    let suite = read("tests/controller/main.rs");
    assert!(suite.contains("\nmod things_main;\n"), "{suite}");
    assert!(
        suite.contains("\nmod core_service;\n") && suite.contains("\nmod service;\n"),
        "{suite}"
    );
    assert!(
        read("src/controller/core/service.rs")
            .contains("use kbr_runtime::k8s_openapi::api::core::v1;\n")
    );
    assert!(read("tests/controller/things_main.rs").contains("MainReconciler"));
    let option = read("src/api/things/v1/option.rs");
    assert!(
        option.contains("pub foo: ::std::option::Option<String>,"),
        "{option}"
    );
    assert!(
        option.contains("skip_serializing_if = \"::std::option::Option::is_none\""),
        "{option}"
    );
    let string = read("src/api/things/v1/string.rs");
    assert!(
        string.contains("pub foo: Option<::std::string::String>,"),
        "{string}"
    );
    let vec = read("src/api/things/v1/vec.rs");
    assert!(
        vec.contains("pub conditions: ::std::vec::Vec<metav1::Condition>,"),
        "{vec}"
    );
    let serialize = read("src/api/things/v1/serialize.rs");
    assert!(
        serialize.contains("\nuse serde::Deserialize;\n"),
        "{serialize}"
    );
    assert!(
        serialize.contains("serde::Serialize, Deserialize"),
        "{serialize}"
    );
    let custom = read("src/api/things/v1/custom_resource.rs");
    assert!(
        !custom.contains("use kbr_runtime::CustomResource;"),
        "{custom}"
    );
    assert!(
        custom.contains("#[derive(\n    kbr_runtime::CustomResource,\n    Clone,\n"),
        "{custom}"
    );
    let client = read("src/controller/things/client.rs");
    assert!(client.contains("type Object = v1::Client;"), "{client}");
    assert!(
        client.contains("async fn reconcile(&self, client: Arc<v1::Client>)"),
        "{client}"
    );
    let foo = read("src/controller/things/foo.rs");
    assert!(
        foo.contains("async fn reconcile(&self, foo_obj: Arc<v1::Foo>)"),
        "{foo}"
    );
    let crate_kind = read("src/api/things/v1/mod.rs");
    assert!(
        crate_kind.contains("mod crate_;\npub use crate_::{Crate, CrateSpec, CrateStatus};"),
        "{crate_kind}"
    );
    let api = read("src/api/mod.rs");
    assert!(api.contains("\npub mod a_b_c;\n#[allow(clippy::module_inception)]\npub mod api;\npub mod cache;\npub mod controller;\npub mod crate_;\npub mod eventing;\npub mod r#match;\npub mod networking_configuration_policies;\npub mod things;\n"), "{api}");
    let cache = read("src/controller/cache/mod.rs");
    assert!(
        cache.contains("#[allow(clippy::module_inception)]\nmod cache;\n"),
        "{cache}"
    );
}

fn assert_builds(dir: &Path) {
    cargo_in(dir, &["build", "--all-targets"]);
    cargo_in(dir, &["clippy", "--all-targets", "--", "-D", "warnings"]);
    cargo_in(dir, &["test"]);
}

/// The manager's `--help`, from the binary `cargo build` made in `dir`.
fn manager_help(dir: &Path) -> String {
    let out = Command::new(env!("CARGO"))
        .args(["run", "--quiet", "--bin", "knative-lite", "--", "--help"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", workspace_target())
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "slow: builds generated projects against the workspace runtime"]
fn knative_builds_after_every_step() {
    let (_tmp, dir) = empty_dir("knative-lite");
    let runtime = workspace_runtime();
    kbr_ok(
        &dir,
        &[
            "init",
            "--domain",
            "knative.dev",
            "--runtime-path",
            &runtime,
        ],
    );
    assert_builds(&dir);
    let help = manager_help(&dir);
    for flag in [
        "--metrics-cert-path <METRICS_CERT_PATH>",
        "--metrics-cert-name <METRICS_CERT_NAME>",
        "--metrics-cert-key <METRICS_CERT_KEY>",
        "[default: tls.crt]",
        "--webhook-cert-path <WEBHOOK_CERT_PATH>",
    ] {
        assert!(help.contains(flag), "{flag} in {help}");
    }
    for api in KNATIVE_APIS {
        assert_eq!(create_api(&dir, api, &[]).code, 0);
        assert_builds(&dir);
    }
}

#[test]
#[ignore = "slow: builds generated projects against the workspace runtime"]
fn tricky_names_build() {
    let runtime = workspace_runtime();
    // Sharded, so the sharding code builds and its three-replica test runs with every name;
    // knative_builds_after_every_step covers a project without.
    let (_tmp, dir) = tricky_project(&["--runtime-path", &runtime, "--sharding"]);
    assert_builds(&dir);
}

/// Issue 14.2: with `Broker` in `eventing` and `messaging`, the generated suite registers every
/// controller with one manager (`every_controller_registers_with_one_manager`) and each Broker
/// reconciler's test passes.
#[test]
#[ignore = "slow: builds generated projects against the workspace runtime"]
fn broker_in_two_groups_runs_in_one_manager() {
    let (_tmp, dir) = empty_dir("knative-lite");
    let runtime = workspace_runtime();
    kbr_ok(
        &dir,
        &[
            "init",
            "--domain",
            "knative.dev",
            "--runtime-path",
            &runtime,
        ],
    );
    for api in [["eventing", "v1", "Broker"], ["messaging", "v1", "Broker"]] {
        assert_eq!(create_api(&dir, api, &[]).code, 0);
    }
    // Beyond the scaffold: run that one manager and see each controller reconcile its Broker.
    fs::write(
        dir.join("tests/controller/both_brokers.rs"),
        BOTH_BROKERS_RECONCILE,
    )
    .expect("write the extra test");
    let suite = dir.join("tests/controller/main.rs");
    let main = fs::read_to_string(&suite).expect("suite");
    fs::write(
        &suite,
        main.replace("mod broker;\n", "mod both_brokers;\nmod broker;\n"),
    )
    .expect("write the suite");
    cargo_in(&dir, &["test"]);
}

/// A test added to the generated project of [`broker_in_two_groups_runs_in_one_manager`]: one
/// manager with every controller, a Broker in each group, and each controller's reconcile
/// counted under its own name on `/metrics`.
const BOTH_BROKERS_RECONCILE: &str = r#"
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use kbr_testing::TestEnv;
use kbr_runtime::{Manager, ManagerOptions};
use knative_lite::api::{eventing, messaging};

fn metrics(addr: std::net::SocketAddr) -> String {
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .expect("request");
    let mut body = String::new();
    stream.read_to_string(&mut body).expect("response");
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_brokers_reconcile_in_one_manager() -> anyhow::Result<()> {
    let scheme = knative_lite::scheme();
    let env = TestEnv::start(scheme.clone()).await?;
    let options = ManagerOptions {
        metrics_bind_address: "127.0.0.1:0".into(),
        health_probe_bind_address: "0".into(),
        ..ManagerOptions::default()
    };
    let mut manager = Manager::with_client(env.kube_client(), scheme, options);
    knative_lite::setup_controllers(&mut manager)?;
    let mut addresses = manager.serving_addresses();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(manager.start_with_shutdown(async move {
        let _ = stopped.await;
    }));
    let bound = addresses.wait_for(Option::is_some).await?.clone();
    let addr = bound.and_then(|b| b.metrics).expect("metrics bound");

    let mut broker = eventing::v1::Broker::new("b1", Default::default());
    broker.metadata.namespace = Some("default".into());
    env.client().create(&broker).await?;
    let mut broker = messaging::v1::Broker::new("b1", Default::default());
    broker.metadata.namespace = Some("default".into());
    env.client().create(&broker).await?;

    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let body = tokio::task::spawn_blocking(move || metrics(addr)).await?;
        let counted = ["broker", "messaging-broker"].iter().all(|name| {
            body.contains(&format!(
                "controller_runtime_reconcile_total{{controller=\"{name}\",result=\"success\"}} 1"
            ))
        });
        if counted {
            break;
        }
        assert!(Instant::now() < deadline, "both controllers did not reconcile:\n{body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = stop.send(());
    running.await??;
    Ok(())
}
"#;
