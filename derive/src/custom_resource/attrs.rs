//! `#[kbr(...)]` on a Spec struct -> [`Attrs`], validated.

use syn::{Attribute, LitStr, Path};

use super::nested::{PrintColumn, Scale, read_printcolumn, read_scale};
use crate::keys::{RESOURCE_KEYS, is_marker};
use crate::names;
use crate::parse::{self, Errors, set_once};

/// `deprecated` / `deprecated = "warning"`.
pub(crate) enum Deprecated {
    No,
    Yes(Option<LitStr>),
}

/// Everything `#[kbr(...)]` said, validated; required keys present.
pub(crate) struct Attrs {
    pub group: LitStr,
    pub version: LitStr,
    pub kind: LitStr,
    pub plural: String,
    pub singular: String,
    pub namespaced: bool,
    pub status: Option<Path>,
    pub short_names: Vec<LitStr>,
    pub categories: Vec<LitStr>,
    pub printcolumns: Vec<PrintColumn>,
    pub scale: Option<Scale>,
    pub storage: bool,
    pub served: bool,
    pub deprecated: Deprecated,
    pub selectable_fields: Vec<LitStr>,
    pub labels: Vec<(LitStr, LitStr)>,
    pub annotations: Vec<(LitStr, LitStr)>,
    pub doc: Option<LitStr>,
    pub derives: Vec<Path>,
    pub max_description_len: Option<i32>,
}

/// What has been read so far.
#[derive(Default)]
struct Raw {
    group: Option<LitStr>,
    version: Option<LitStr>,
    kind: Option<LitStr>,
    plural: Option<LitStr>,
    singular: Option<LitStr>,
    namespaced: Option<bool>,
    status: Option<Path>,
    short_names: Vec<LitStr>,
    categories: Vec<LitStr>,
    printcolumns: Vec<PrintColumn>,
    scale: Option<Scale>,
    storage: Option<bool>,
    served: Option<bool>,
    deprecated: Option<Deprecated>,
    selectable_fields: Vec<LitStr>,
    labels: Vec<(LitStr, LitStr)>,
    annotations: Vec<(LitStr, LitStr)>,
    doc: Option<LitStr>,
    derives: Vec<Path>,
    max_description_len: Option<i32>,
    /// Every key read (even when its value was invalid), to not also report it as missing.
    seen: Vec<String>,
}

impl Raw {
    fn read(&mut self, meta: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
        let key = parse::key(meta);
        self.seen.push(key.clone());
        match key.as_str() {
            "group" => {
                let v = parse::string(meta, "group", "group = \"eventing.knative.dev\"")?;
                set_once(&mut self.group, v, meta, "group")
            }
            "version" => {
                let v = parse::string(meta, "version", "version = \"v1alpha1\"")?;
                set_once(&mut self.version, v, meta, "version")
            }
            "kind" => {
                let v = parse::string(meta, "kind", "kind = \"Broker\"")?;
                set_once(&mut self.kind, v, meta, "kind")
            }
            "plural" => {
                let v = parse::string(meta, "plural", "plural = \"brokers\"")?;
                set_once(&mut self.plural, v, meta, "plural")
            }
            "singular" => {
                let v = parse::string(meta, "singular", "singular = \"broker\"")?;
                set_once(&mut self.singular, v, meta, "singular")
            }
            "namespaced" => {
                let v = parse::flag(meta, "namespaced")?;
                set_once(&mut self.namespaced, v, meta, "namespaced")
            }
            "status" => {
                let v = parse::string(meta, "status", "status = \"BrokerStatus\"")?;
                let path: Path = v.parse().map_err(|_| {
                    syn::Error::new(
                        v.span(),
                        "`status` must name a type, e.g. `status = \"BrokerStatus\"`",
                    )
                })?;
                set_once(&mut self.status, path, meta, "status")
            }
            "shortname" | "short_name" => {
                let v = parse::string(meta, &key, &format!("{key} = \"bkr\""))?;
                self.short_names.push(v);
                Ok(())
            }
            "shortnames" | "short_names" => {
                let v = parse::strings(meta, &key, &format!("{key} = [\"bkr\"]"))?;
                self.short_names.extend(v);
                Ok(())
            }
            "category" => {
                self.categories
                    .push(parse::string(meta, "category", "category = \"all\"")?);
                Ok(())
            }
            "categories" => {
                let v = parse::strings(meta, "categories", "categories = [\"all\"]")?;
                self.categories.extend(v);
                Ok(())
            }
            "printcolumn" => {
                let column = read_printcolumn(meta)?;
                self.printcolumns.push(column);
                Ok(())
            }
            "scale" => {
                let scale = read_scale(meta)?;
                set_once(&mut self.scale, scale, meta, "scale")
            }
            "storage" => {
                let v = parse::flag(meta, "storage")?;
                set_once(&mut self.storage, v, meta, "storage")
            }
            "served" => {
                let v = parse::flag(meta, "served")?;
                set_once(&mut self.served, v, meta, "served")
            }
            "deprecated" => {
                let v = if meta.input.peek(syn::Token![=]) {
                    let warning =
                        parse::string(meta, "deprecated", "deprecated = \"use v1 instead\"")?;
                    Deprecated::Yes(Some(warning))
                } else {
                    Deprecated::Yes(None)
                };
                set_once(&mut self.deprecated, v, meta, "deprecated")
            }
            "selectable_field" | "selectable" => {
                let v = parse::string(meta, &key, &format!("{key} = \".spec.color\""))?;
                self.selectable_fields.push(v);
                Ok(())
            }
            "selectable_fields" => {
                let v = parse::strings(meta, &key, "selectable_fields = [\".spec.color\"]")?;
                self.selectable_fields.extend(v);
                Ok(())
            }
            "label" => {
                self.labels.push(parse::pair(meta, "label")?);
                Ok(())
            }
            "annotation" => {
                self.annotations.push(parse::pair(meta, "annotation")?);
                Ok(())
            }
            "doc" => {
                let v = parse::string(meta, "doc", "doc = \"Broker routes events.\"")?;
                set_once(&mut self.doc, v, meta, "doc")
            }
            "derive" => {
                if meta.input.peek(syn::token::Paren) {
                    meta.parse_nested_meta(|inner| {
                        self.derives.push(inner.path.clone());
                        Ok(())
                    })
                } else {
                    let v = parse::string(meta, "derive", "derive = \"PartialEq\"")?;
                    let path: Path = v.parse().map_err(|_| {
                        syn::Error::new(
                            v.span(),
                            "`derive` must name a derive macro, e.g. `derive = \"PartialEq\"`",
                        )
                    })?;
                    self.derives.push(path);
                    Ok(())
                }
            }
            "max_description_len" => {
                let v = parse::int(meta, "max_description_len", "max_description_len = 80")?;
                if v < 0 {
                    return Err(
                        meta.error("`max_description_len` must be 0 (drop descriptions) or more")
                    );
                }
                set_once(
                    &mut self.max_description_len,
                    v,
                    meta,
                    "max_description_len",
                )
            }
            _ if is_marker(&key) => Err(meta.error(format!(
                "`{key}` is a schema marker: put `#[kbr_runtime::schema]` above \
                 `#[derive(...)]` so it is applied"
            ))),
            _ => Err(parse::unknown(meta, "kbr", &key, RESOURCE_KEYS)),
        }
    }
}

impl Attrs {
    /// `<group>/<version>`, the objects' `apiVersion`.
    pub(crate) fn api_version(&self) -> String {
        format!("{}/{}", self.group.value(), self.version.value())
    }

    /// Reads every `#[kbr(...)]` of `attrs`; `ident` is the Spec struct (for the errors about
    /// missing keys and the kind/struct name clash).
    pub(crate) fn from_attributes(attrs: &[Attribute], ident: &syn::Ident) -> syn::Result<Attrs> {
        let mut raw = Raw::default();
        let mut errors = Errors::default();
        for attr in attrs.iter().filter(|attr| attr.path().is_ident("kbr")) {
            if let Err(error) = attr.parse_nested_meta(|meta| raw.read(&meta)) {
                errors.push(error);
            }
        }
        let required = "#[kbr(group = \"example.com\", version = \"v1\", kind = \"Foo\")]";
        let missing: Vec<&str> = [
            ("group", raw.group.is_none()),
            ("version", raw.version.is_none()),
            ("kind", raw.kind.is_none()),
        ]
        .into_iter()
        .filter(|(key, absent)| *absent && !raw.seen.iter().any(|seen| seen == key))
        .map(|(key, _)| key)
        .collect();
        let (Some(group), Some(version), Some(kind)) = (raw.group, raw.version, raw.kind) else {
            // An attribute that failed to parse was not read past the error: its later keys
            // may be there, so only report the error itself.
            if missing.is_empty() || errors.any() {
                return Err(errors.into_error());
            }
            errors.push(syn::Error::new(
                ident.span(),
                format!(
                    "#[derive(CustomResource)] needs {} in #[kbr(...)]: add e.g. {required}",
                    missing.join(", ")
                ),
            ));
            return Err(errors.into_error());
        };

        errors.check(group.span(), "`group`", names::group(&group.value()));
        errors.check(
            version.span(),
            "`version`",
            names::dns1035_label(&version.value()),
        );
        let kind_value = kind.value();
        errors.check(kind.span(), "`kind`", names::kind(&kind_value));
        if kind_value == "Self" {
            errors.push(syn::Error::new(
                kind.span(),
                "`kind` cannot be `Self` (a Rust keyword): pick another kind",
            ));
        }
        if *ident == kind_value {
            errors.push(syn::Error::new(
                kind.span(),
                format!(
                    "`kind = \"{kind_value}\"` names the generated root type, so it cannot be the \
                     Spec struct's name too: rename the struct to `{kind_value}Spec`"
                ),
            ));
        }
        let singular = match &raw.singular {
            Some(lit) => {
                errors.check(lit.span(), "`singular`", names::dns1035_label(&lit.value()));
                lit.value()
            }
            None => kind_value.to_ascii_lowercase(),
        };
        let plural = match &raw.plural {
            Some(lit) => {
                errors.check(lit.span(), "`plural`", names::dns1035_label(&lit.value()));
                lit.value()
            }
            None => kbr_core::plural::pluralize(&singular),
        };
        for name in &raw.short_names {
            errors.check(
                name.span(),
                "short name",
                names::dns1035_label(&name.value()),
            );
        }
        for name in &raw.categories {
            errors.check(name.span(), "category", names::dns1035_label(&name.value()));
        }
        for path in &raw.selectable_fields {
            errors.check(
                path.span(),
                "selectable field",
                names::json_path(&path.value()),
            );
        }
        for (key, _) in raw.labels.iter().chain(&raw.annotations) {
            errors.check(
                key.span(),
                "label/annotation key",
                names::non_empty(&key.value()),
            );
        }
        errors.finish()?;
        Ok(Attrs {
            group,
            version,
            kind,
            plural,
            singular,
            namespaced: raw.namespaced.unwrap_or(false),
            status: raw.status,
            short_names: raw.short_names,
            categories: raw.categories,
            printcolumns: raw.printcolumns,
            scale: raw.scale,
            storage: raw.storage.unwrap_or(true),
            served: raw.served.unwrap_or(true),
            deprecated: raw.deprecated.unwrap_or(Deprecated::No),
            selectable_fields: raw.selectable_fields,
            labels: raw.labels,
            annotations: raw.annotations,
            doc: raw.doc,
            derives: raw.derives,
            max_description_len: raw.max_description_len,
        })
    }
}
