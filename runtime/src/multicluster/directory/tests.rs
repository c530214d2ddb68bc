//! The directory provider against a temporary directory: engage, re-engage, disengage.

use std::time::Duration;

use super::super::provider::{Aware, ClusterEvent};
use super::{DirectoryProvider, cluster_name};
use crate::multicluster::Provider as _;

fn kubeconfig(server: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n"
    )
}

/// Writes `content` to `name` in `dir` at once (a rename), so no poll sees half a file.
fn write(dir: &std::path::Path, name: &str, content: &str) {
    let staging = dir.join(format!(".{name}.tmp"));
    std::fs::write(&staging, content).unwrap();
    std::fs::rename(&staging, dir.join(name)).unwrap();
}

/// The next event, as `("engage" | "disengage", name)`.
async fn next(events: &mut tokio::sync::mpsc::UnboundedReceiver<ClusterEvent>) -> (String, String) {
    let event = tokio::time::timeout(Duration::from_secs(10), events.recv())
        .await
        .expect("an event within 10 s")
        .expect("the provider runs");
    match event {
        ClusterEvent::Engage { name, .. } => ("engage".into(), name),
        ClusterEvent::Disengage { name } => ("disengage".into(), name),
    }
}

fn event(kind: &str, name: &str) -> (String, String) {
    (kind.into(), name.into())
}

#[test]
fn clusters_are_named_after_their_files() {
    assert_eq!(cluster_name("eu-1.yaml").as_deref(), Some("eu-1"));
    assert_eq!(cluster_name("eu-1.yml").as_deref(), Some("eu-1"));
    assert_eq!(cluster_name("us.kubeconfig").as_deref(), Some("us"));
    assert_eq!(
        cluster_name("edge.example.com").as_deref(),
        Some("edge.example.com")
    );
    assert_eq!(cluster_name(".hidden.yaml"), None);
    assert_eq!(cluster_name(".yaml"), None);
}

#[tokio::test]
async fn files_appearing_changing_and_disappearing_engage_reengage_and_disengage() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.yaml", &kubeconfig("https://127.0.0.1:1"));
    write(dir.path(), "broken.yaml", "clusters: [");
    let (aware, mut events) = Aware::channel();
    let provider = DirectoryProvider::new(dir.path()).poll_interval(Duration::from_millis(10));
    let running = tokio::spawn(provider.run(aware));

    // The broken file is skipped; the valid one engaged.
    assert_eq!(next(&mut events).await, event("engage", "a"));
    write(
        dir.path(),
        "b.kubeconfig",
        &kubeconfig("https://127.0.0.1:2"),
    );
    assert_eq!(next(&mut events).await, event("engage", "b"));
    // New credentials: engaged again.
    write(dir.path(), "a.yaml", &kubeconfig("https://127.0.0.1:3"));
    assert_eq!(next(&mut events).await, event("engage", "a"));
    // A file that stops parsing keeps its cluster engaged; fixing it re-engages.
    write(dir.path(), "b.kubeconfig", "clusters: [");
    write(
        dir.path(),
        "broken.yaml",
        &kubeconfig("https://127.0.0.1:4"),
    );
    assert_eq!(next(&mut events).await, event("engage", "broken"));
    std::fs::remove_file(dir.path().join("b.kubeconfig")).unwrap();
    assert_eq!(next(&mut events).await, event("disengage", "b"));
    std::fs::remove_file(dir.path().join("a.yaml")).unwrap();
    assert_eq!(next(&mut events).await, event("disengage", "a"));

    // The manager stops listening: the provider returns.
    drop(events);
    write(dir.path(), "c.yaml", &kubeconfig("https://127.0.0.1:5"));
    let ended = tokio::time::timeout(Duration::from_secs(10), running).await;
    assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
}
