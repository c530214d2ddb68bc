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

//! The Grafana dashboards of `grafana/` against a real Prometheus (the grafana plugin): it
//! scrapes the manager's `/metrics` as the metrics reader, and every query of every panel
//! returns data once the samples were reconciled.
//!
//! Runs when `PROMETHEUS` names a prometheus binary (e.g. `/usr/bin/prometheus` of Debian's
//! `prometheus` package); skipped otherwise, saying so.

use std::fs::File;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use kbr_runtime::serde_json::{self, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::cluster::Cluster;
use crate::process;

/// The scrape job: what `$job` stands for in the dashboards' queries.
const JOB: &str = "project-with-plugins-manager";

/// How long Prometheus may take to scrape the manager and have data for every query.
const DATA_TIMEOUT: Duration = Duration::from_secs(60);

/// The dashboards whose queries are checked.
const DASHBOARDS: [&str; 2] = ["grafana", "grafana/custom-metrics"];

/// A running Prometheus, killed (and its folder removed) when dropped.
struct Prometheus {
    child: Child,
    dir: PathBuf,
    address: SocketAddr,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts Prometheus scraping the manager, waits for its target to be up and queries every
/// panel of the dashboards, printing each query and its number of series.
///
/// # Errors
///
/// When Prometheus does not start, its target stays down, or a query returns no series.
pub async fn check(cluster: &Cluster, token: &str) -> anyhow::Result<()> {
    let Ok(binary) = std::env::var("PROMETHEUS") else {
        println!("grafana: skipped (set PROMETHEUS to a prometheus binary to query every panel)");
        return Ok(());
    };
    let prometheus = start(&binary, cluster, token)?;
    let up = ["up{job=\"", JOB, "\"}"].concat();
    let deadline = Instant::now() + DATA_TIMEOUT;
    loop {
        // Refused connections too, until Prometheus listens.
        let result = query(prometheus.address, &up).await;
        if result.as_ref().is_ok_and(|series| {
            series
                .first()
                .is_some_and(|series| series["value"][1] == "1")
        }) {
            break;
        }
        if Instant::now() > deadline {
            bail!("Prometheus's target stayed down: {result:?}");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    println!(
        "prometheus: target https://{}/metrics is up (job {JOB})",
        cluster.metrics()
    );
    for (file, title, expr) in panel_queries()? {
        let expr = expr
            .replace("$job", JOB)
            .replace("$namespace", cluster.namespace());
        let series = loop {
            // Rates need two scrapes in their window: the first ones may come back empty.
            let series = query(prometheus.address, &expr).await?.len();
            if series > 0 || Instant::now() > deadline {
                break series;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        println!("grafana: {file}: {title}: {expr} -> {series} series");
        ensure!(
            series > 0,
            "{file}: the query of panel {title:?} returns no data: {expr}"
        );
    }
    Ok(())
}

/// Prometheus on a free loopback port, scraping the manager every second with `token`.
fn start(binary: &str, cluster: &Cluster, token: &str) -> anyhow::Result<Prometheus> {
    let dir = std::env::temp_dir().join(format!("{JOB}-prometheus-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let token_file = dir.join("token");
    std::fs::write(&token_file, token)?;
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:
  scrape_interval: 1s
scrape_configs:
- job_name: {JOB}
  scheme: https
  tls_config:
    insecure_skip_verify: true
  authorization:
    credentials_file: {}
  static_configs:
  - targets: ['{}']
    labels:
      namespace: {}
",
            token_file.display(),
            cluster.metrics(),
            cluster.namespace()
        ),
    )?;
    let address = process::free_address()?;
    let log = File::create(dir.join("prometheus.log"))?;
    let child = Command::new(binary)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address={address}"))
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .with_context(|| format!("starting {binary}"))?;
    println!("prometheus: {binary} on {address}, scraping the manager every second");
    Ok(Prometheus {
        child,
        dir,
        address,
    })
}

/// Every query of every panel of the dashboards: (file, panel title, expression).
fn panel_queries() -> anyhow::Result<Vec<(String, String, String)>> {
    let mut queries = Vec::new();
    for dir in DASHBOARDS {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .collect();
        files.sort();
        for file in files {
            let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(&file)?)
                .with_context(|| format!("reading {}", file.display()))?;
            for panel in dashboard["panels"].as_array().into_iter().flatten() {
                for target in panel["targets"].as_array().into_iter().flatten() {
                    if let Some(expr) = target["expr"].as_str() {
                        queries.push((
                            file.display().to_string(),
                            panel["title"].as_str().unwrap_or_default().to_owned(),
                            expr.to_owned(),
                        ));
                    }
                }
            }
        }
    }
    Ok(queries)
}

/// The series an instant query of `expr` returns (Prometheus's HTTP API).
async fn query(address: SocketAddr, expr: &str) -> anyhow::Result<Vec<Value>> {
    let mut stream = tokio::net::TcpStream::connect(address).await?;
    let request = format!(
        "GET /api/v1/query?query={} HTTP/1.0\r\nHost: {address}\r\n\r\n",
        encode(expr)
    );
    stream.write_all(request.as_bytes()).await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body)
        .context("Prometheus's answer has no body")?;
    let answer: Value = serde_json::from_str(body)
        .with_context(|| format!("Prometheus's answer to {expr}: {body}"))?;
    ensure!(
        answer["status"] == "success",
        "Prometheus refused {expr}: {answer}"
    );
    Ok(answer["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default())
}

/// `text` percent-encoded for a URL's query.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(byte).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}
