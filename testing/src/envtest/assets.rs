//! Finding the control-plane binaries: Kubebuilder's `KUBEBUILDER_ASSETS` convention.

use std::path::{Path, PathBuf};

use super::Error;

/// The environment variable naming the folder of envtest binaries, as in Kubebuilder
/// (`setup-envtest use -p path` prints such a folder).
pub const ASSETS_ENV: &str = "KUBEBUILDER_ASSETS";

/// The binaries a start needs.
const REQUIRED: [&str; 2] = ["etcd", "kube-apiserver"];

/// What the error messages say the folder must hold.
fn expected() -> String {
    "`etcd` and `kube-apiserver` (and `kubectl`, optional)".to_owned()
}

/// Whether `KUBEBUILDER_ASSETS` is set to a non-empty value — i.e. whether tests should use
/// envtest. Does not check the folder's contents (a start reports what is missing).
pub fn available() -> bool {
    std::env::var_os(ASSETS_ENV).is_some_and(|v| !v.is_empty())
}

/// A folder of control-plane binaries (`etcd`, `kube-apiserver`, optionally `kubectl`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Assets {
    dir: PathBuf,
}

impl Assets {
    /// `explicit`, else `$KUBEBUILDER_ASSETS`; checks the required binaries are there.
    pub(super) fn locate(explicit: Option<&Path>) -> Result<Self, Error> {
        let dir = match explicit {
            Some(dir) => dir.to_path_buf(),
            None => match std::env::var_os(ASSETS_ENV).filter(|v| !v.is_empty()) {
                Some(dir) => PathBuf::from(dir),
                None => {
                    return Err(Error::AssetsNotSet {
                        var: ASSETS_ENV,
                        expected: expected(),
                    });
                }
            },
        };
        let assets = Self { dir };
        let missing: Vec<&'static str> = REQUIRED
            .into_iter()
            .filter(|name| !assets.binary(name).is_file())
            .collect();
        if !missing.is_empty() {
            return Err(Error::AssetsMissing {
                var: ASSETS_ENV,
                dir: assets.dir,
                missing,
                expected: expected(),
            });
        }
        Ok(assets)
    }

    /// The path of binary `name` in the folder (`.exe` appended on Windows).
    pub(super) fn binary(&self, name: &str) -> PathBuf {
        self.dir
            .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_without_the_binaries_names_what_is_missing() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("etcd"), b"").expect("write");
        match Assets::locate(Some(dir.path())) {
            Err(Error::AssetsMissing { missing, var, .. }) => {
                assert_eq!(missing, ["kube-apiserver"]);
                assert_eq!(var, "KUBEBUILDER_ASSETS");
            }
            other => panic!("expected AssetsMissing, got {other:?}"),
        }
        std::fs::write(dir.path().join("kube-apiserver"), b"").expect("write");
        let assets = Assets::locate(Some(dir.path())).expect("complete folder");
        assert_eq!(assets.binary("etcd"), dir.path().join("etcd"));
    }
}
