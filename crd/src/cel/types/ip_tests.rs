use super::Addr;

fn addr(text: &str) -> Addr {
    Addr::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn parse_errors_are_gos() {
    for (text, error) in [
        ("", r#"ParseAddr(""): unable to parse IP"#),
        ("x", r#"ParseAddr("x"): unable to parse IP"#),
        ("%eth0", r#"ParseAddr("%eth0"): missing IPv6 address"#),
        (
            "01.2.3.4",
            r#"ParseAddr("01.2.3.4"): IPv4 field has octet with leading zero"#,
        ),
        (
            "1.2.3.256",
            r#"ParseAddr("1.2.3.256"): IPv4 field has value >255"#,
        ),
        ("1.2.3", r#"ParseAddr("1.2.3"): IPv4 address too short"#),
        (
            "1.2.3.4.5",
            r#"ParseAddr("1.2.3.4.5"): IPv4 address too long"#,
        ),
        (
            "1..2.3",
            r#"ParseAddr("1..2.3"): IPv4 field must have at least one digit (at ".2.3")"#,
        ),
        (
            "1.2.3.a",
            r#"ParseAddr("1.2.3.a"): unexpected character (at "a")"#,
        ),
        (
            "::1::",
            r#"ParseAddr("::1::"): multiple :: in address (at ":")"#,
        ),
        (
            "1:2:3:4:5:6:7:8:9",
            r#"ParseAddr("1:2:3:4:5:6:7:8:9"): trailing garbage after address (at "9")"#,
        ),
        (
            "1:",
            r#"ParseAddr("1:"): colon must be followed by more characters (at ":")"#,
        ),
        (
            "12345::",
            r#"ParseAddr("12345::"): each group must have 4 or less digits (at "12345::")"#,
        ),
        ("::1.2.3", r#"ParseAddr("::1.2.3"): IPv4 address too short"#),
        (
            "::1.2.3.a",
            r#"ParseAddr("::1.2.3.a"): unexpected character (at "a")"#,
        ),
        (
            "fe80::1%",
            r#"ParseAddr("fe80::1%"): zone must be a non-empty string"#,
        ),
        ("1:2", r#"ParseAddr("1:2"): address string too short"#),
    ] {
        assert_eq!(Addr::parse(text).err().as_deref(), Some(error), "{text:?}");
    }
}

#[test]
fn addresses_print_as_go_prints_them() {
    for (text, printed) in [
        ("1.2.3.4", "1.2.3.4"),
        ("2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
        ("1:0:0:1:0:0:0:1", "1:0:0:1::1"),
        ("::ffff:1.2.3.4", "::ffff:1.2.3.4"),
        ("0:0:0:0:0:0:1.2.3.4", "::102:304"),
        ("fe80::1%eth0", "fe80::1%eth0"),
        ("1:2:3:4:5:6:7:0", "1:2:3:4:5:6:7:0"),
        ("::", "::"),
    ] {
        assert_eq!(addr(text).to_string(), printed, "{text}");
    }
}

#[test]
fn predicates() {
    assert!(addr("127.0.0.2").is_loopback() && addr("::1").is_loopback());
    assert!(!addr("255.255.255.255").is_global_unicast() && addr("10.0.0.1").is_global_unicast());
    assert!(!addr("fe80::1").is_global_unicast() && addr("fe80::1").is_link_local_unicast());
    assert!(
        addr("224.0.0.1").is_link_local_multicast() && addr("ff12::2").is_link_local_multicast()
    );
    assert!(addr("0.0.0.0").is_unspecified() && !addr("::1").is_unspecified());
    assert!(addr("::ffff:1.2.3.4").is4in6() && !addr("1.2.3.4").is4in6());
}
