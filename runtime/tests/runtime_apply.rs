//! Two reconcilers with their own field managers each server-side apply one entry of the same
//! list-map (`x-kubernetes-list-type: map`): both entries stay, each owned by its manager
//! (structured-merge-diff `typed/merge.go`, `merge/update.go`). Runs on the fake API server,
//! and on a real kube-apiserver when `KUBEBUILDER_ASSETS` is set (issue 26, acceptance 5).

use std::sync::Arc;

use kbr_runtime::{Action, Client, CustomResource, Error, Reconciler, Scheme};
use kbr_testing::TestEnv;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// BoardSpec is a switchboard whose ports are keyed by name.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "apply.kbr.dev",
    version = "v1",
    kind = "Board",
    plural = "boards"
)]
#[kbr(namespaced)]
pub struct BoardSpec {
    /// The ports, one per name.
    #[kbr(list_type = "map", list_map_keys = ["name"])]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<Port>,
}

/// One port of a board.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Port {
    /// The key.
    pub name: String,
    /// The port number.
    pub number: i32,
}

/// Makes sure its one port is on every board, as field manager `manager`.
struct PortReconciler {
    client: Client,
    manager: &'static str,
    port: Port,
}

impl Reconciler for PortReconciler {
    type Object = Board;
    type Error = Error;

    async fn reconcile(&self, board: Arc<Board>) -> Result<Action, Error> {
        let name = board.metadata.name.clone().unwrap_or_default();
        let mut desired = Board::new(
            &name,
            BoardSpec {
                ports: vec![self.port.clone()],
            },
        );
        desired.metadata.namespace = board.metadata.namespace.clone();
        self.client.apply(&desired, self.manager).await?;
        Ok(Action::await_change())
    }
}

fn reconciler(client: &Client, manager: &'static str, name: &str, number: i32) -> PortReconciler {
    PortReconciler {
        client: client.clone(),
        manager,
        port: Port {
            name: name.into(),
            number,
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_field_managers_each_apply_one_list_map_entry() -> Result<(), Box<dyn std::error::Error>>
{
    let mut scheme = Scheme::new();
    scheme.add::<Board>();
    let env = TestEnv::start(scheme).await?; // fake, or envtest with KUBEBUILDER_ASSETS
    let client = env.client();
    let mut board = Board::new("main", BoardSpec::default());
    board.metadata.namespace = Some("default".into());
    let board = Arc::new(client.create(&board).await?);

    let http = reconciler(&client, "http-ports", "http", 80);
    let metrics = reconciler(&client, "metrics-ports", "metrics", 9090);
    assert_eq!(http.reconcile(board.clone()).await?, Action::await_change());
    metrics.reconcile(board.clone()).await?;
    // Reconciling again changes nothing: each manager still owns only its entry.
    http.reconcile(board).await?;

    let stored: Board = client.get(Some("default"), "main").await?;
    let ports: Vec<(&str, i32)> = stored
        .spec
        .ports
        .iter()
        .map(|p| (p.name.as_str(), p.number))
        .collect();
    assert_eq!(ports, [("http", 80), ("metrics", 9090)]);
    let mut owners: Vec<(String, String, serde_json::Value)> = stored
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter(|e| e.operation.as_deref() == Some("Apply"))
        .map(|e| {
            let fields = e
                .fields_v1
                .as_ref()
                .map_or(serde_json::Value::Null, |f| f.0.clone());
            (
                e.manager.clone().unwrap_or_default(),
                e.operation.clone().unwrap_or_default(),
                fields,
            )
        })
        .collect();
    owners.sort_by(|a, b| a.0.cmp(&b.0));
    let item = |name: &str| {
        serde_json::json!({"f:spec": {"f:ports": {format!("k:{{\"name\":\"{name}\"}}"):
            {".": {}, "f:name": {}, "f:number": {}}}}})
    };
    assert_eq!(
        owners,
        [
            ("http-ports".to_owned(), "Apply".to_owned(), item("http")),
            (
                "metrics-ports".to_owned(),
                "Apply".to_owned(),
                item("metrics")
            ),
        ]
    );
    Ok(())
}
