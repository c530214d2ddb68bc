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

//! Reading the manager's `/metrics` endpoint as a caller with a given token, and the Prometheus
//! text it returns.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use kbr_runtime::kube::Client;
use kbr_runtime::kube::config::{Config, KubeConfigOptions, Kubeconfig};

use crate::process;

/// The answer to a GET of `/metrics` at `address` (HTTPS, self-signed) with `token` as bearer
/// token (none: anonymous): the body, or the HTTP status code of a refusal.
///
/// # Errors
///
/// When the request cannot be made at all (no answer, no TLS).
pub async fn get(address: SocketAddr, token: Option<&str>) -> anyhow::Result<Result<String, u16>> {
    let server = format!("https://{address}");
    let kubeconfig = Kubeconfig::from_yaml(&process::kubeconfig(&server, None, token, "default"))?;
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?;
    let client = Client::try_from(config)?;
    match client
        .request_text(http::Request::get("/metrics").body(Vec::new())?)
        .await
    {
        Ok(body) => Ok(Ok(body)),
        Err(kbr_runtime::kube::Error::Api(status)) => Ok(Err(status.code)),
        Err(error) => Err(error.into()),
    }
}

/// One sample of a metric: its labels and value.
pub type Sample = (BTreeMap<String, String>, f64);

/// The samples of the metric `name` in the Prometheus text `text`.
pub fn samples(text: &str, name: &str) -> Vec<Sample> {
    text.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix(name)?;
            let (labels, value) = match rest.strip_prefix('{') {
                Some(rest) => rest.split_once("} ")?,
                None => ("", rest.strip_prefix(' ')?),
            };
            let labels = labels
                .split(',')
                .filter_map(|pair| pair.split_once('='))
                .map(|(key, value)| (key.to_owned(), value.trim_matches('"').to_owned()))
                .collect();
            Some((labels, value.split_whitespace().next()?.parse().ok()?))
        })
        .collect()
}
