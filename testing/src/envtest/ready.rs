//! Readiness of the control plane: etcd's `/health`, then kube-apiserver's `/readyz` and the
//! `default` namespace its bootstrap controller creates.

use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::Error;
use super::flags::HOST;
use super::process::Process;
use super::wait::Deadline;

/// Upper bound for one check, so a hung connection cannot eat the whole start-up deadline.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// Runs `check` until it passes, the process exits (→ [`Error::ExitedEarly`]) or `deadline`
/// passes (→ [`Error::NotReady`] quoting the last check's failure).
async fn until_ready<F, Fut>(
    process: &mut Process,
    deadline: &Deadline,
    mut check: F,
) -> Result<(), Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    loop {
        process.check_running()?;
        let last_check = match tokio::time::timeout(CHECK_TIMEOUT, check()).await {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(failure)) => failure,
            Err(_) => format!("no answer within {CHECK_TIMEOUT:?}"),
        };
        if deadline.passed() {
            process.check_running()?;
            return Err(Error::NotReady {
                process: process.name(),
                waited: deadline.timeout(),
                last_check,
                log: process.log().to_path_buf(),
                tail: process.tail(),
            });
        }
        deadline.pause().await;
    }
}

/// Waits for etcd's `GET /health` to answer `{"health":"true"}`.
pub(super) async fn etcd(
    process: &mut Process,
    port: u16,
    deadline: &Deadline,
) -> Result<(), Error> {
    until_ready(process, deadline, || async move {
        let (status, body) = http_get(port, "/health").await?;
        if status == 200 && body.contains(r#""health":"true""#) {
            Ok(())
        } else {
            Err(format!("GET /health: {status} {body}"))
        }
    })
    .await
}

/// Waits for kube-apiserver's `GET /readyz` to answer `ok` and for the `default` namespace.
pub(super) async fn apiserver(
    process: &mut Process,
    client: &kube::Client,
    deadline: &Deadline,
) -> Result<(), Error> {
    until_ready(process, deadline, || async move {
        let readyz = http::Request::get("/readyz")
            .body(Vec::new())
            .map_err(|e| e.to_string())?;
        match client.request_text(readyz).await {
            Ok(body) if body.trim() == "ok" => {}
            Ok(body) => return Err(format!("GET /readyz: {body}")),
            Err(e) => return Err(format!("GET /readyz: {e}")),
        }
        let namespaces: Api<Namespace> = Api::all(client.clone());
        match namespaces.get_opt("default").await {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err("namespace \"default\" does not exist yet".to_owned()),
            Err(e) => Err(format!("GET namespace default: {e}")),
        }
    })
    .await
}

/// A minimal plain-HTTP `GET` on loopback: (status code, body).
async fn http_get(port: u16, path: &str) -> Result<(u16, String), String> {
    let mut stream = tokio::net::TcpStream::connect((HOST, port))
        .await
        .map_err(|e| format!("connecting to {HOST}:{port}: {e}"))?;
    let request = format!("GET {path} HTTP/1.0\r\nHost: {HOST}:{port}\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| format!("sending GET {path}: {e}"))?;
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .await
        .map_err(|e| format!("reading the answer to GET {path}: {e}"))?;
    let response = String::from_utf8_lossy(&response);
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    Ok((status, body))
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn http_get_reads_status_and_body() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.expect("accept");
            let mut request = [0u8; 256];
            let n = socket.read(&mut request).await.expect("read");
            assert!(String::from_utf8_lossy(&request[..n]).starts_with("GET /health HTTP/1.0"));
            socket
                .write_all(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{\"health\":\"true\",\"reason\":\"\"}")
                .await
                .expect("write");
        });
        let (status, body) = super::http_get(port, "/health").await.expect("get");
        assert_eq!(status, 200);
        assert_eq!(body, r#"{"health":"true","reason":""}"#);
        server.await.expect("server");
    }
}
