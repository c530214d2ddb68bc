//! Installing CustomResourceDefinitions and waiting until they are served, like
//! controller-runtime's `envtest.InstallCRDs` + `WaitForCRDs`.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList;
use kube::api::{Api, PostParams};

use super::Error;
use super::wait::Deadline;

/// Creates (or replaces) each CRD, then waits until every one is `Established`, has its
/// names accepted, and every served version is listed by discovery.
pub(super) async fn install(
    client: &kube::Client,
    crds: &[CustomResourceDefinition],
    timeout: Duration,
) -> Result<(), Error> {
    // One object per name; a later definition replaces an earlier one.
    let mut by_name = BTreeMap::new();
    for crd in crds {
        by_name.insert(crd.metadata.name.clone().unwrap_or_default(), crd);
    }
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for (name, crd) in &by_name {
        let what = format!("installing CustomResourceDefinition {name:?}");
        match api.create(&PostParams::default(), crd).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.is_already_exists() => {
                let existing = api.get(name).await.map_err(Error::api(what.clone()))?;
                let mut replacement = (*crd).clone();
                replacement.metadata.resource_version = existing.metadata.resource_version;
                api.replace(name, &PostParams::default(), &replacement)
                    .await
                    .map_err(Error::api(what))?;
            }
            Err(e) => return Err(Error::api(what)(e)),
        }
        tracing::debug!(crd = %name, "envtest installed CustomResourceDefinition");
    }
    let deadline = Deadline::after(timeout);
    for (name, crd) in &by_name {
        wait_served(client, &api, name, crd, &deadline).await?;
    }
    Ok(())
}

/// Polls (bounded by `deadline`) until `name` is established and discovery lists it.
async fn wait_served(
    client: &kube::Client,
    api: &Api<CustomResourceDefinition>,
    name: &str,
    crd: &CustomResourceDefinition,
    deadline: &Deadline,
) -> Result<(), Error> {
    loop {
        let state = match served_state(client, api, name, crd).await {
            Ok(None) => return Ok(()),
            Ok(Some(state)) => state,
            Err(e) => e.to_string(),
        };
        if deadline.passed() {
            return Err(Error::CrdNotEstablished {
                name: name.to_owned(),
                waited: deadline.timeout(),
                state,
            });
        }
        deadline.pause().await;
    }
}

/// `None` when served, else what is still missing.
async fn served_state(
    client: &kube::Client,
    api: &Api<CustomResourceDefinition>,
    name: &str,
    crd: &CustomResourceDefinition,
) -> Result<Option<String>, kube::Error> {
    let current = api.get(name).await?;
    let conditions = current
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default();
    let is_true = |type_: &str| {
        conditions
            .iter()
            .any(|c| c.type_ == type_ && c.status == "True")
    };
    if !is_true("Established") || !is_true("NamesAccepted") {
        let summary: Vec<String> = conditions
            .iter()
            .map(|c| {
                format!(
                    "{}={} ({})",
                    c.type_,
                    c.status,
                    c.message.as_deref().unwrap_or("")
                )
            })
            .collect();
        return Ok(Some(format!("conditions: [{}]", summary.join(", "))));
    }
    let spec = &crd.spec;
    for version in spec.versions.iter().filter(|v| v.served) {
        let path = format!("/apis/{}/{}", spec.group, version.name);
        let request = http::Request::get(&path)
            .body(Vec::new())
            .map_err(kube::Error::HttpError)?;
        let listed = match client.request::<APIResourceList>(request).await {
            Ok(list) => list,
            Err(kube::Error::Api(status)) if status.is_not_found() => {
                return Ok(Some(format!("discovery does not serve {path} yet")));
            }
            Err(e) => return Err(e),
        };
        if !listed.resources.iter().any(|r| r.name == spec.names.plural) {
            return Ok(Some(format!(
                "discovery of {path} does not list {:?} yet",
                spec.names.plural
            )));
        }
    }
    Ok(None)
}
