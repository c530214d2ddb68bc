//! Several versions of one kind -> one CustomResourceDefinition.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionVersion,
};

use super::{CrdError, compare_versions};

/// Merges CRDs of the same kind (typically one per version, from [`super::build`]) into one.
///
/// All inputs must agree on `metadata.name`, `spec.group`, `spec.names.kind`,
/// `spec.names.plural` and `spec.scope`. The result holds every version, sorted by Kubernetes
/// version priority (`v2`, `v1`, `v1beta1`, `v1alpha1`; see [`compare_versions`]), and takes
/// its names (short names, categories, singular, listKind), labels and annotations from the CRD
/// holding the storage version: a kind's identity follows the version stored in etcd.
/// Like kube-core's `merge_crds`, but the storage version is found, not named, and ordering is
/// deterministic whatever the input order.
///
/// # Errors
/// [`CrdError::NothingToMerge`] for an empty input; [`CrdError::Mismatch`] when two inputs
/// disagree on a shared field; [`CrdError::DuplicateVersion`] when a version appears twice;
/// [`CrdError::MultipleStorageVersions`] / [`CrdError::NoStorageVersion`] unless exactly one
/// version has `storage: true`.
pub fn merge(crds: Vec<CustomResourceDefinition>) -> Result<CustomResourceDefinition, CrdError> {
    let first = crds.first().ok_or(CrdError::NothingToMerge)?;
    let crd_name = first.metadata.name.clone().unwrap_or_default();
    let first_version = version_names(first);
    for other in &crds[1..] {
        let checks: [(&'static str, Option<&str>, Option<&str>); 5] = [
            (
                "name",
                first.metadata.name.as_deref(),
                other.metadata.name.as_deref(),
            ),
            ("group", Some(&first.spec.group), Some(&other.spec.group)),
            (
                "kind",
                Some(&first.spec.names.kind),
                Some(&other.spec.names.kind),
            ),
            (
                "plural",
                Some(&first.spec.names.plural),
                Some(&other.spec.names.plural),
            ),
            ("scope", Some(&first.spec.scope), Some(&other.spec.scope)),
        ];
        for (field, left, right) in checks {
            if left != right {
                return Err(CrdError::Mismatch {
                    crd: crd_name,
                    field,
                    versions: format!("{first_version} and {}", version_names(other)),
                    first_value: left.unwrap_or_default().to_owned(),
                    second_value: right.unwrap_or_default().to_owned(),
                });
            }
        }
    }

    let mut versions: Vec<(usize, CustomResourceDefinitionVersion)> = Vec::new();
    for (index, crd) in crds.iter().enumerate() {
        for version in &crd.spec.versions {
            if versions.iter().any(|(_, seen)| seen.name == version.name) {
                return Err(CrdError::DuplicateVersion {
                    crd: crd_name,
                    version: version.name.clone(),
                });
            }
            versions.push((index, version.clone()));
        }
    }
    versions.sort_by(|(_, a), (_, b)| compare_versions(&b.name, &a.name));

    let mut storage = versions.iter().filter(|(_, version)| version.storage);
    let storage_index = match (storage.next(), storage.next()) {
        (Some((index, _)), None) => *index,
        (Some((_, first)), Some((_, second))) => {
            return Err(CrdError::MultipleStorageVersions {
                crd: crd_name,
                first: first.name.clone(),
                second: second.name.clone(),
            });
        }
        (None, _) => {
            let names: Vec<&str> = versions.iter().map(|(_, v)| v.name.as_str()).collect();
            return Err(CrdError::NoStorageVersion {
                crd: crd_name,
                versions: names.join(", "),
            });
        }
    };
    let mut merged = crds[storage_index].clone();
    merged.spec.versions = versions.into_iter().map(|(_, version)| version).collect();
    Ok(merged)
}

fn version_names(crd: &CustomResourceDefinition) -> String {
    let names: Vec<&str> = crd.spec.versions.iter().map(|v| v.name.as_str()).collect();
    names.join(", ")
}
