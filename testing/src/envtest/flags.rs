//! The command lines of etcd and kube-apiserver, and how user flags override them.
//!
//! The defaults follow what controller-runtime's envtest passes (its `controlplane` package),
//! adjusted for kube-apiserver 1.33+: secure serving only, a generated serving certificate,
//! service-account issuer and keys, a static token file for the admin user, RBAC, and the
//! `ServiceAccount` admission plugin off (no controller-manager creates `default`
//! ServiceAccounts).

use std::path::Path;

/// Where the control plane listens and keeps its files.
#[derive(Clone, Debug)]
pub(super) struct Layout<'a> {
    /// The data directory (etcd's data lives in `etcd/` under it, certificates beside).
    pub(super) dir: &'a Path,
    pub(super) etcd_client_port: u16,
    pub(super) etcd_peer_port: u16,
    pub(super) apiserver_port: u16,
}

/// The loopback host every process binds.
pub(super) const HOST: &str = "127.0.0.1";

/// File names inside the data directory.
pub(super) mod files {
    pub(crate) const CA: &str = "ca.crt";
    pub(crate) const SERVING_CERT: &str = "apiserver.crt";
    pub(crate) const SERVING_KEY: &str = "apiserver.key";
    pub(crate) const SA_KEY: &str = "sa.key";
    pub(crate) const SA_PUB: &str = "sa.pub";
    pub(crate) const TOKENS: &str = "tokens.csv";
    pub(crate) const KUBECONFIG: &str = "kubeconfig";
}

fn flag(name: &str, value: impl std::fmt::Display) -> (String, String) {
    (name.to_owned(), value.to_string())
}

/// etcd: one member on loopback, data in `<dir>/etcd`, no fsync (tests need no durability).
pub(super) fn etcd(layout: &Layout<'_>) -> Vec<(String, String)> {
    let client = format!("http://{HOST}:{}", layout.etcd_client_port);
    let peer = format!("http://{HOST}:{}", layout.etcd_peer_port);
    vec![
        flag("data-dir", layout.dir.join("etcd").display()),
        flag("listen-client-urls", &client),
        flag("advertise-client-urls", &client),
        flag("listen-peer-urls", &peer),
        flag("initial-advertise-peer-urls", &peer),
        flag("initial-cluster", format!("default={peer}")),
        // etcd >= 3.5 (every envtest release for Kubernetes >= 1.22).
        flag("unsafe-no-fsync", "true"),
    ]
}

/// kube-apiserver: secure port on loopback, backed by the etcd above.
pub(super) fn apiserver(layout: &Layout<'_>) -> Vec<(String, String)> {
    let file = |name: &str| layout.dir.join(name).display().to_string();
    let url = format!("https://{HOST}:{}", layout.apiserver_port);
    vec![
        flag(
            "etcd-servers",
            format!("http://{HOST}:{}", layout.etcd_client_port),
        ),
        flag("bind-address", HOST),
        // Without it the apiserver looks for a non-loopback interface with a default route
        // (absent in many sandboxes) to advertise.
        flag("advertise-address", HOST),
        flag("secure-port", layout.apiserver_port),
        flag("cert-dir", file("apiserver-certs")),
        flag("tls-cert-file", file(files::SERVING_CERT)),
        flag("tls-private-key-file", file(files::SERVING_KEY)),
        flag("token-auth-file", file(files::TOKENS)),
        flag("authorization-mode", "RBAC"),
        flag("service-cluster-ip-range", "10.0.0.0/24"),
        flag("service-account-issuer", &url),
        flag("service-account-key-file", file(files::SA_PUB)),
        flag("service-account-signing-key-file", file(files::SA_KEY)),
        // No controller-manager creates the `default` ServiceAccount Pods would need.
        flag("disable-admission-plugins", "ServiceAccount"),
        flag("allow-privileged", "true"),
        // No `kubernetes` Service endpoints: a loopback address is not a valid endpoint, and
        // nothing in a test reaches the apiserver through the Service.
        flag("endpoint-reconciler-type", "none"),
    ]
}

/// The name of a `--name[=value]` flag (without dashes), if `arg` is one.
fn flag_name(arg: &str) -> Option<&str> {
    let rest = arg.strip_prefix("--")?;
    Some(rest.split_once('=').map_or(rest, |(name, _)| name))
}

/// `defaults` as `--name=value` arguments, except those `overrides` name, followed by
/// `overrides` verbatim (so a user flag replaces a default of the same name, and repeatable
/// flags can be given several times).
pub(super) fn merge(defaults: Vec<(String, String)>, overrides: &[String]) -> Vec<String> {
    let overridden: Vec<&str> = overrides.iter().filter_map(|a| flag_name(a)).collect();
    defaults
        .into_iter()
        .filter(|(name, _)| !overridden.contains(&name.as_str()))
        .map(|(name, value)| format!("--{name}={value}"))
        .chain(overrides.iter().cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(dir: &Path) -> Layout<'_> {
        Layout {
            dir,
            etcd_client_port: 2001,
            etcd_peer_port: 2002,
            apiserver_port: 6001,
        }
    }

    #[test]
    fn apiserver_flags_point_at_etcd_and_the_generated_files() {
        let dir = Path::new("/tmp/envtest-x");
        let args = merge(apiserver(&layout(dir)), &[]);
        for expected in [
            "--etcd-servers=http://127.0.0.1:2001",
            "--secure-port=6001",
            "--bind-address=127.0.0.1",
            "--service-account-issuer=https://127.0.0.1:6001",
            "--tls-cert-file=/tmp/envtest-x/apiserver.crt",
            "--token-auth-file=/tmp/envtest-x/tokens.csv",
            "--service-account-signing-key-file=/tmp/envtest-x/sa.key",
            "--disable-admission-plugins=ServiceAccount",
            "--authorization-mode=RBAC",
        ] {
            assert!(args.iter().any(|a| a == expected), "{expected} in {args:?}");
        }
    }

    #[test]
    fn etcd_flags_are_one_loopback_member() {
        let args = merge(etcd(&layout(Path::new("/d"))), &[]);
        assert!(args.contains(&"--listen-client-urls=http://127.0.0.1:2001".to_owned()));
        assert!(args.contains(&"--initial-cluster=default=http://127.0.0.1:2002".to_owned()));
        assert!(args.contains(&"--data-dir=/d/etcd".to_owned()));
    }

    #[test]
    fn user_flags_replace_defaults_of_the_same_name() {
        let defaults = vec![flag("authorization-mode", "RBAC"), flag("v", "0")];
        let merged = merge(
            defaults,
            &[
                "--authorization-mode=AlwaysAllow".into(),
                "--feature-gates=A=true".into(),
                "--feature-gates=B=true".into(),
            ],
        );
        assert_eq!(
            merged,
            [
                "--v=0",
                "--authorization-mode=AlwaysAllow",
                "--feature-gates=A=true",
                "--feature-gates=B=true"
            ]
        );
    }
}
