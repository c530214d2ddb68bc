//! Validation of `kbr create api` against the project: flags, existing resources, and names
//! that would collide in Rust modules, types or CRDs.

use super::error::CreateApiError;
use crate::builtin::{self, BuiltinKind};
use crate::cli::CreateApiArgs;
use crate::names::resource::{self, ResourceNames};
use crate::names::{self, rust};
use crate::project::{Api, Project, Resource};

/// The deploy-image plugin's flags: it scaffolds the API type and its controller together, for a
/// namespaced kind (the Deployment lives in its namespace), with an image and a command without
/// spaces or empty parts.
fn validate_deploy_image(args: &CreateApiArgs) -> Result<(), CreateApiError> {
    let Some(image) = &args.image else {
        return Ok(());
    };
    let refuse = |reason: &str| {
        Err(CreateApiError::DeployImage {
            reason: reason.to_owned(),
        })
    };
    if !args.resource || !args.controller {
        return refuse(
            "scaffolds the API type and its controller together; drop --resource=false and --controller=false",
        );
    }
    if !args.namespaced {
        return refuse(
            "needs a namespaced kind (its Deployment lives in the object's namespace); drop --namespaced=false",
        );
    }
    if image.is_empty() || image.chars().any(char::is_whitespace) {
        return refuse("needs an image reference without spaces, e.g. memcached:1.6.26-alpine3.19");
    }
    if let Some(command) = &args.image_container_command
        && command
            .split(',')
            .any(|part| part.is_empty() || part.chars().any(char::is_whitespace))
    {
        return refuse(
            "--image-container-command takes comma-separated words without spaces or empty parts, e.g. memcached,--memory-limit=64,-o,modern,-v",
        );
    }
    if args.image_container_port == Some(0) {
        return refuse("--image-container-port must be a port from 1 to 65535");
    }
    if args.run_as_user.is_some_and(|user| user < 0) {
        return refuse("--run-as-user must be a user ID of 0 or more");
    }
    Ok(())
}

/// Validates the flags against the project; returns the resource to record in PROJECT and its
/// names.
pub(super) fn validate(
    args: &CreateApiArgs,
    project: &Project,
) -> Result<(Resource, ResourceNames), CreateApiError> {
    names::validate_group(&args.group, &project.domain)?;
    names::validate_version(&args.version)?;
    names::validate_kind(&args.kind)?;
    if let Some(plural) = &args.plural {
        names::validate_plural(plural, &args.kind)?;
    }
    if !args.resource && !args.controller {
        return Err(CreateApiError::NothingToDo);
    }
    validate_deploy_image(args)?;
    if args.resource
        && let Some(kind) = builtin::in_group(&args.group, &args.kind)
    {
        return Err(CreateApiError::ShadowsBuiltin {
            kind: args.kind.clone(),
            group: args.group.clone(),
            gvk: kind.gvk(),
        });
    }
    let existing = project.find(&args.group, &args.version, &args.kind);
    let gvk = || {
        format!(
            "{}.{}/{}, Kind={}",
            args.group, project.domain, args.version, args.kind
        )
    };
    let has_api = existing.is_some_and(|e| e.api.is_some());
    if args.resource && has_api && !args.force {
        return Err(CreateApiError::ApiExists { gvk: gvk() });
    }
    if !args.resource && !has_api {
        return match builtin::lookup(&args.group, &args.version, &args.kind)? {
            Some(kind) => validate_builtin(args, project, kind),
            None => Err(CreateApiError::NoApi { gvk: gvk() }),
        };
    }
    if args.controller && existing.is_some_and(|e| e.controller) && !args.force {
        return Err(CreateApiError::ControllerExists { gvk: gvk() });
    }

    // Other versions of the same kind share one CRD: same plural and scope.
    let sibling = project.resources.iter().find(|other| {
        other.group == args.group && other.kind == args.kind && other.version != args.version
    });
    let plural = match (&args.plural, sibling) {
        (Some(plural), _) => plural.clone(),
        (None, Some(sibling)) => sibling.plural.clone(),
        (None, None) => kbr_core::plural::resource_plural(&args.kind),
    };
    let namespaced = if args.resource {
        args.namespaced
    } else {
        existing
            .and_then(|e| e.api.as_ref())
            .is_none_or(|api| api.namespaced)
    };
    let resource = Resource {
        api: if args.resource {
            Some(Api {
                crd_version: "v1".to_owned(),
                namespaced,
            })
        } else {
            existing.and_then(|e| e.api.clone())
        },
        controller: args.controller || existing.is_some_and(|e| e.controller),
        controller_name: None,
        domain: project.domain.clone(),
        group: args.group.clone(),
        kind: args.kind.clone(),
        path: String::new(),
        plural,
        version: args.version.clone(),
        webhooks: existing.and_then(|e| e.webhooks.clone()),
    };
    let names = ResourceNames::new(&rust::crate_name(&project.project_name), &resource);
    check_clashes(project, &resource, &names, sibling, args.controller)?;
    let controller_name = controller_name(args, project, &resource, existing)?;
    Ok(recorded(resource, names, controller_name))
}

/// `resource` as PROJECT records it, with its `path` and `controller_name`, and its names.
fn recorded(
    resource: Resource,
    names: ResourceNames,
    controller_name: Option<String>,
) -> (Resource, ResourceNames) {
    let names = ResourceNames {
        controller_name: controller_name
            .clone()
            .unwrap_or_else(|| names.kind_lower.clone()),
        ..names
    };
    let resource = Resource {
        path: names.module_path.clone(),
        controller_name,
        ..resource
    };
    (resource, names)
}

/// A controller for the built-in kind `kind` (`--resource=false` for a group Kubernetes
/// defines, Kubebuilder's "core types"): recorded under the group's Kubebuilder name and domain,
/// with the k8s-openapi module as `path`.
fn validate_builtin(
    args: &CreateApiArgs,
    project: &Project,
    kind: &BuiltinKind,
) -> Result<(Resource, ResourceNames), CreateApiError> {
    if let Some(plural) = args.plural.as_ref().filter(|p| *p != kind.plural) {
        return Err(CreateApiError::Clash(format!(
            "the built-in kind {} has the plural {:?}, not {plural:?}; drop --plural",
            kind.kind, kind.plural
        )));
    }
    let existing = project.find(kind.group, kind.version, kind.kind);
    if existing.is_some_and(|e| e.controller) && !args.force {
        return Err(CreateApiError::Clash(format!(
            "controller for {} already exists; pass --force to overwrite its files",
            kind.gvk()
        )));
    }
    let resource = Resource {
        controller: true,
        // `kbr create webhook` may have recorded the kind first.
        webhooks: existing.and_then(|e| e.webhooks.clone()),
        ..kind.resource()
    };
    let names = ResourceNames::new(&rust::crate_name(&project.project_name), &resource);
    check_clashes(project, &resource, &names, None, true)?;
    let controller_name = controller_name(args, project, &resource, existing)?;
    Ok(recorded(resource, names, controller_name))
}

/// The controller's name to record in PROJECT (`None`: the default, the lower-cased kind).
///
/// `--controller-name` when given (a DNS-1123 label, as Kubebuilder's `--controller-name`);
/// else the name recorded by an earlier `create api` for this resource; else `<group>-<kind>`
/// when another group of the project has a controller whose name is the lower-cased kind
/// (Kubebuilder names multigroup controllers `<group>-<kind>` since kubebuilder#4161), else the
/// lower-cased kind, so the metric labels of existing projects stay as they were. Errors when
/// the name is another controller's: controller-runtime, like kbr's manager, refuses two
/// controllers of one name (they would share metric series).
fn controller_name(
    args: &CreateApiArgs,
    project: &Project,
    new: &Resource,
    existing: Option<&Resource>,
) -> Result<Option<String>, CreateApiError> {
    if !new.controller {
        return Ok(None);
    }
    let others: Vec<(String, &Resource)> = resource::of_project(project)
        .into_iter()
        .filter(|(other, _)| other.controller)
        .filter(|(other, _)| {
            !(other.group == new.group && other.version == new.version && other.kind == new.kind)
        })
        .map(|(other, names)| (names.controller_name, other))
        .collect();
    let default = new.kind.to_lowercase();
    let name = match &args.controller_name {
        Some(name) => {
            if kbr_core::dns::dns1123_label(name).is_err() {
                return Err(CreateApiError::Clash(format!(
                    "invalid controller name {name:?}: a controller name must be a DNS-1123 label (at most 63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit); pass e.g. --controller-name {}",
                    qualified_name(new)
                )));
            }
            name.clone()
        }
        None => match existing.and_then(|e| e.controller_name.clone()) {
            Some(recorded) => recorded,
            None if others.iter().any(|(name, _)| *name == default) => qualified_name(new),
            None => default.clone(),
        },
    };
    if let Some((_, other)) = others.iter().find(|(other, _)| *other == name) {
        return Err(CreateApiError::Clash(format!(
            "the controller of {} is already named {name:?}; controller names must be unique, pass another --controller-name",
            other.gvk_display()
        )));
    }
    Ok((name != default).then_some(name))
}

/// `<group>-<kind>`, lower case, dots of the group as dashes: e.g. `messaging-broker`.
fn qualified_name(resource: &Resource) -> String {
    format!(
        "{}-{}",
        resource.group.replace('.', "-"),
        resource.kind.to_lowercase()
    )
}

/// Errors if `new` collides with another resource of `project`: module names, type names,
/// resource names, or a CRD whose versions disagree.
fn check_clashes(
    project: &Project,
    new: &Resource,
    r: &ResourceNames,
    sibling: Option<&Resource>,
    controller: bool,
) -> Result<(), CreateApiError> {
    let new_api = new.api.as_ref().is_none_or(|api| api.namespaced);
    if let Some(sibling) = sibling {
        if sibling.plural != new.plural {
            return Err(CreateApiError::Clash(format!(
                "kind {} of {} already has the plural {:?} (version {}); all versions of a kind share one CRD, pass --plural {} or drop --plural",
                new.kind, r.qualified_group, sibling.plural, sibling.version, sibling.plural
            )));
        }
        let sibling_namespaced = sibling.api.as_ref().is_none_or(|api| api.namespaced);
        if sibling_namespaced != new_api {
            return Err(CreateApiError::Clash(format!(
                "kind {} of {} is {} in version {}; all versions of a kind share one scope, pass --namespaced={}",
                new.kind,
                r.qualified_group,
                if sibling_namespaced {
                    "namespaced"
                } else {
                    "cluster-scoped"
                },
                sibling.version,
                sibling_namespaced
            )));
        }
        if controller && sibling.controller {
            return Err(CreateApiError::Clash(format!(
                "kind {} of {} already has a controller (for version {}); pass --controller=false",
                new.kind, r.qualified_group, sibling.version
            )));
        }
    }
    for (other, o) in resource::of_project(project) {
        if other.group == new.group && other.version == new.version && other.kind == new.kind {
            continue;
        }
        if o.group_module == r.group_module && other.group != new.group {
            return Err(CreateApiError::Clash(format!(
                "group {:?} and the existing group {:?} would share the Rust module `{}`; pass another --group",
                new.group, other.group, r.group_module
            )));
        }
        if other.group != new.group || other.kind == new.kind {
            continue;
        }
        if o.kind_module == r.kind_module {
            return Err(CreateApiError::Clash(format!(
                "kind {} and the existing kind {} of group {} would share the Rust module `{}`; pass another --kind",
                new.kind, other.kind, r.qualified_group, r.kind_module
            )));
        }
        if other.plural == new.plural {
            return Err(CreateApiError::Clash(format!(
                "the plural {:?} of kind {} is already the plural of kind {} in group {}; pass another --plural",
                new.plural, new.kind, other.kind, r.qualified_group
            )));
        }
        let derived = |kind: &str| [format!("{kind}Spec"), format!("{kind}Status")];
        if other.version == new.version
            && (derived(&other.kind).contains(&new.kind)
                || derived(&new.kind).contains(&other.kind))
        {
            return Err(CreateApiError::Clash(format!(
                "kind {} would clash with the Spec/Status types of kind {} in {}/{}; pass another --kind",
                new.kind, other.kind, r.qualified_group, new.version
            )));
        }
    }
    Ok(())
}
