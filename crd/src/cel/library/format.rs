//! The Kubernetes format library: `format.<name>()`, `format.named(name)` and
//! `<format>.validate(s)`.
//!
//! Mirrors `k8s.io/apiserver/pkg/cel/library/format.go` (`ConstantFormats`,
//! `formatLibraryDecls`): `validate` answers `optional.none()` for a valid string and
//! `optional.of([messages])` otherwise; `format.named` answers `optional.none()` for an
//! unknown name. The formats are [`crate::cel::types::format`]'s.

use cel::common::functions::Function;
use cel::common::types::{CelList, CelOptional, CelString};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use crate::cel::types::format::{FORMATS, Format, named};

/// Registers the library's overloads on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_member_overload!(env, fn validate: (Format, CelString) -> CelOptional,
        id = "format-validate")?;
    cel::add_overload!(env, fn format_named: (CelString) -> CelOptional, name = "format.named",
        id = "format-named")?;
    // `CONSTANTS` has one function per format, in order (a test checks the lengths).
    for ((key, _), constant) in FORMATS.iter().zip(CONSTANTS) {
        let name = format!("format.{key}");
        env.add_overload(&name, &name, Vec::new(), constant)?;
    }
    Ok(())
}

/// `format.<name>()`: the `I`th of [`FORMATS`].
fn constant<'b, 'v, const I: usize>(
    _: Vec<CowVal<'b, 'v>>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (_, format) = FORMATS
        .get(I)
        .ok_or_else(|| ExecutionError::function_error("format", "no such format"))?;
    Ok(CowVal::owned(*format))
}

/// The zero-argument function of each of [`FORMATS`], in order.
const CONSTANTS: [Function; 13] = [
    constant::<0>,
    constant::<1>,
    constant::<2>,
    constant::<3>,
    constant::<4>,
    constant::<5>,
    constant::<6>,
    constant::<7>,
    constant::<8>,
    constant::<9>,
    constant::<10>,
    constant::<11>,
    constant::<12>,
];

fn validate(format: &Format, text: &CelString<'_>) -> CelOptional<'static> {
    let messages = format.validate(text.inner());
    if messages.is_empty() {
        return CelOptional::none();
    }
    let list: Vec<Box<dyn Val>> = messages
        .into_iter()
        .map(|m| Box::new(CelString::from(m)) as Box<dyn Val>)
        .collect();
    CelOptional::of(Box::new(CelList::from(list)))
}

fn format_named(name: &CelString<'_>) -> CelOptional<'static> {
    match named(name.inner()) {
        Some(format) => CelOptional::of(Box::new(format)),
        None => CelOptional::none(),
    }
}

#[cfg(test)]
mod tests {
    use super::{CONSTANTS, FORMATS};

    #[test]
    fn every_format_has_its_function() {
        assert_eq!(CONSTANTS.len(), FORMATS.len());
    }
}
