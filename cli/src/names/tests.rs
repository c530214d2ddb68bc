use super::*;

#[test]
fn domains() {
    assert!(validate_domain("knative.dev").is_ok());
    assert!(validate_domain("my.domain").is_ok());
    for bad in ["Knative.dev", "knative_dev", ".dev", "dev.", ""] {
        assert_eq!(
            validate_domain(bad),
            Err(NameError::Domain {
                value: bad.to_owned()
            })
        );
    }
}

#[test]
fn project_names() {
    assert_eq!(
        validate_project_name("knative-lite", false).as_deref(),
        Ok("knative_lite")
    );
    let err = validate_project_name("Knative_Lite", true).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid project name \"Knative_Lite\" (the directory name): a project name must be a DNS-1123 label that starts with a letter (at most 63 characters of a-z, 0-9 and '-', ending with a letter or digit); pass e.g. --project-name knative-lite"
    );
    assert!(matches!(
        validate_project_name("1project", false),
        Err(NameError::ProjectName { .. })
    ));
    for clash in [
        "serde",
        "kbr-runtime",
        "std",
        "manifests",
        "proc-macro",
        "tokio",
    ] {
        assert!(
            matches!(
                validate_project_name(clash, false),
                Err(NameError::ProjectNameClash { .. })
            ),
            "{clash}"
        );
    }
    assert!(matches!(
        validate_project_name("type", false),
        Err(NameError::ProjectNameClash { .. })
    ));
}

#[test]
fn groups() {
    assert_eq!(
        validate_group("eventing", "knative.dev").as_deref(),
        Ok("eventing.knative.dev")
    );
    assert_eq!(
        validate_group("foo.bar", "example.com").as_deref(),
        Ok("foo.bar.example.com")
    );
    assert_eq!(
        validate_group("eventing.knative.dev", "knative.dev")
            .unwrap_err()
            .to_string(),
        "invalid group \"eventing.knative.dev\": the group must not include the project domain \"knative.dev\" (kbr appends it: eventing.knative.dev.knative.dev); pass --group eventing"
    );
    assert_eq!(
        validate_group("Eventing", "knative.dev")
            .unwrap_err()
            .to_string(),
        "invalid group \"Eventing\": a group must be lower case (a DNS-1123 subdomain); pass --group eventing"
    );
    assert!(matches!(
        validate_group("Eventing.Knative.Dev", "knative.dev"),
        Err(NameError::GroupCase { suggestion, .. }) if suggestion == "eventing"
    ));
    for bad in ["foo_bar", "-foo", "3d", "foo..bar", ""] {
        assert!(
            matches!(
                validate_group(bad, "knative.dev"),
                Err(NameError::Group { .. })
            ),
            "{bad}"
        );
    }
}

#[test]
fn versions() {
    for ok in ["v1", "v1alpha1", "v2beta3", "v10", "v1beta12"] {
        assert_eq!(validate_version(ok), Ok(()), "{ok}");
    }
    for bad in [
        "1", "V1", "v0", "v01", "v1alpha", "v1alpha0", "v1gamma1", "v1beta01", "", "v",
    ] {
        assert!(validate_version(bad).is_err(), "{bad}");
    }
}

#[test]
fn kinds() {
    for ok in [
        "Broker",
        "HTTPRoute",
        "V1Thing",
        "Option",
        "Service",
        "Crate",
    ] {
        assert_eq!(validate_kind(ok), Ok(()), "{ok}");
    }
    assert_eq!(
        validate_kind("broker").unwrap_err().to_string(),
        "invalid kind \"broker\": a kind must be PascalCase (an upper-case letter followed by letters and digits); pass e.g. --kind Broker"
    );
    assert!(matches!(
        validate_kind("my-kind"),
        Err(NameError::KindCase { suggestion, .. }) if suggestion == "MyKind"
    ));
    // The API server refuses a CRD whose lower-cased listKind (`<Kind>List`) is longer than a
    // DNS-1035 label: 63 - 4 = 59 characters.
    assert!(matches!(
        validate_kind(&"A".repeat(60)),
        Err(NameError::KindTooLong { len: 60, .. })
    ));
    assert!(validate_kind(&"A".repeat(59)).is_ok());
    assert!(matches!(
        validate_kind("Self"),
        Err(NameError::KindReserved { .. })
    ));
}

#[test]
fn plurals() {
    assert_eq!(validate_plural("brokers", "Broker"), Ok(()));
    assert!(matches!(
        validate_plural("Brokers", "Broker"),
        Err(NameError::Plural { suggestion, .. }) if suggestion == "brokers"
    ));
    assert!(validate_plural("3brokers", "Broker").is_err());
    assert_eq!(validate_plural("oxen", "Ox"), Ok(()));
    assert!(matches!(
        validate_plural("Oxes", "Ox"),
        Err(NameError::Plural { suggestion, .. }) if suggestion == "oxen"
    ));
}
