//! Validation of `kbr create webhook` against the project: flags, the API it needs, webhooks
//! that exist already, and the spoke versions of a conversion.

use super::error::CreateWebhookError;
use crate::builtin;
use crate::cli::CreateWebhookArgs;
use crate::names;
use crate::project::{Project, Resource, Webhooks};

/// What `kbr create webhook` will scaffold, once validated.
pub(super) struct Request {
    /// The resource (hub with `--conversion`), with its `webhooks` entry updated.
    pub(super) resource: Resource,
    /// The webhooks asked for by this command (not those scaffolded before).
    pub(super) new: Webhooks,
    /// The webhooks scaffolded before this command (all `false` for the first).
    pub(super) previous: Webhooks,
    /// The spoke resources of a conversion, in `--spoke` order.
    pub(super) spokes: Vec<Resource>,
}

/// Validates the flags against `project`.
pub(super) fn validate(
    args: &CreateWebhookArgs,
    project: &Project,
) -> Result<Request, CreateWebhookError> {
    names::validate_group(&args.group, &project.domain)?;
    names::validate_version(&args.version)?;
    names::validate_kind(&args.kind)?;
    if !args.defaulting && !args.programmatic_validation && !args.conversion {
        return Err(CreateWebhookError::NothingChosen);
    }
    if !args.conversion && !args.spoke.is_empty() {
        return Err(CreateWebhookError::SpokeWithoutConversion);
    }
    if args.conversion && args.spoke.is_empty() {
        return Err(CreateWebhookError::ConversionWithoutSpoke {
            version: args.version.clone(),
        });
    }
    let gvk = |version: &str| {
        format!(
            "{}.{}/{}, Kind={}",
            args.group, project.domain, version, args.kind
        )
    };
    let own = project
        .find(&args.group, &args.version, &args.kind)
        .filter(|r| r.api.is_some());
    // A built-in kind (`--group core --version v1 --kind Pod`): defaulting and validation, as
    // Kubebuilder scaffolds for core types; recorded like a controller for it (no `api`).
    let builtin_resource;
    let resource = match own {
        Some(own) => own,
        None => match builtin::lookup(&args.group, &args.version, &args.kind) {
            Ok(Some(kind)) => {
                if args.conversion {
                    return Err(CreateWebhookError::BuiltinConversion { gvk: kind.gvk() });
                }
                builtin_resource = project
                    .find(kind.group, kind.version, kind.kind)
                    .cloned()
                    .unwrap_or_else(|| kind.resource());
                &builtin_resource
            }
            _ => {
                return Err(CreateWebhookError::NoApi {
                    gvk: gvk(&args.version),
                    version: args.version.clone(),
                });
            }
        },
    };

    let existing = resource.webhooks.clone().unwrap_or_default();
    for (asked, exists, what) in [
        (args.defaulting, existing.defaulting, "defaulting"),
        (
            args.programmatic_validation,
            existing.validation,
            "validation",
        ),
        (args.conversion, existing.conversion, "conversion"),
    ] {
        if asked && exists && !args.force {
            return Err(CreateWebhookError::Exists { what });
        }
    }

    let mut spokes = Vec::new();
    for spoke in &args.spoke {
        names::validate_version(spoke)?;
        if spoke == &args.version {
            return Err(CreateWebhookError::SpokeIsHub {
                version: spoke.clone(),
            });
        }
        if spokes.iter().any(|s: &Resource| &s.version == spoke) {
            return Err(CreateWebhookError::DuplicateSpoke {
                version: spoke.clone(),
            });
        }
        let found = project
            .find(&args.group, spoke, &args.kind)
            .filter(|r| r.api.is_some())
            .ok_or_else(|| CreateWebhookError::NoApi {
                gvk: gvk(spoke),
                version: spoke.clone(),
            })?;
        spokes.push(found.clone());
    }
    if args.conversion {
        // One hub per kind: no other version may be a hub, and this one may not be a spoke.
        for other in project
            .resources
            .iter()
            .filter(|o| o.group == args.group && o.kind == args.kind && o.version != args.version)
        {
            let hooks = other.webhooks.as_ref();
            if hooks.is_some_and(|h| h.conversion) {
                return Err(CreateWebhookError::OtherHub {
                    kind: args.kind.clone(),
                    hub: other.version.clone(),
                });
            }
            if hooks.is_some_and(|h| h.spoke.contains(&args.version)) {
                return Err(CreateWebhookError::OtherHub {
                    kind: args.kind.clone(),
                    hub: other.version.clone(),
                });
            }
        }
    }

    let new = Webhooks {
        conversion: args.conversion,
        defaulting: args.defaulting,
        spoke: args.spoke.clone(),
        validation: args.programmatic_validation,
        webhook_version: "v1".to_owned(),
    };
    let merged = Webhooks {
        conversion: existing.conversion || new.conversion,
        defaulting: existing.defaulting || new.defaulting,
        spoke: if new.conversion {
            new.spoke.clone()
        } else {
            existing.spoke.clone()
        },
        validation: existing.validation || new.validation,
        webhook_version: "v1".to_owned(),
    };
    let resource = Resource {
        webhooks: Some(merged),
        ..resource.clone()
    };
    Ok(Request {
        resource,
        new,
        previous: existing,
        spokes,
    })
}
