//! The certificates and keys of a local control plane, made with rcgen: a CA, serving
//! certificates it signs (kube-apiserver's, a local webhook server's), the service-account
//! signing key, and the admin bearer token.

use std::hash::{BuildHasher, Hasher};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

use super::Error;

/// A certificate and its private key, both PEM.
#[derive(Clone)]
pub(super) struct KeyedCert {
    pub(super) cert_pem: String,
    pub(super) key_pem: String,
}

/// A self-signed certificate authority that signs serving certificates.
pub(super) struct CertificateAuthority {
    cert_pem: String,
    cert_der: Vec<u8>,
    issuer: Issuer<'static, KeyPair>,
}

fn failed(what: &'static str) -> impl FnOnce(rcgen::Error) -> Error {
    move |e| Error::Certificates {
        what,
        reason: e.to_string(),
    }
}

impl CertificateAuthority {
    /// A new CA whose subject common name is `common_name`.
    pub(super) fn new(common_name: &str) -> Result<Self, Error> {
        let what = "a certificate authority";
        let key = KeyPair::generate().map_err(failed(what))?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(failed(what))?;
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
        ];
        let cert = params.self_signed(&key).map_err(failed(what))?;
        Ok(Self {
            cert_pem: cert.pem(),
            cert_der: cert.der().to_vec(),
            issuer: Issuer::new(params, key),
        })
    }

    /// The CA certificate, PEM (a `caBundle`, a kubeconfig's `certificate-authority`).
    pub(super) fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// The CA certificate, DER (`kube::Config::root_cert`).
    pub(super) fn cert_der(&self) -> &[u8] {
        &self.cert_der
    }

    /// A TLS serving certificate for `hosts` (IP addresses become IP SANs, anything else DNS
    /// SANs), signed by this CA.
    pub(super) fn serving_cert(
        &self,
        common_name: &str,
        hosts: &[&str],
    ) -> Result<KeyedCert, Error> {
        let what = "a serving certificate";
        let key = KeyPair::generate().map_err(failed(what))?;
        let sans: Vec<String> = hosts.iter().map(|h| (*h).to_owned()).collect();
        let mut params = CertificateParams::new(sans).map_err(failed(what))?;
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let cert = params.signed_by(&key, &self.issuer).map_err(failed(what))?;
        Ok(KeyedCert {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}

/// The service-account token signing key: (private key PEM, public key PEM), for
/// `--service-account-signing-key-file` and `--service-account-key-file`.
pub(super) fn signing_key() -> Result<(String, String), Error> {
    let key = KeyPair::generate().map_err(failed("the service-account signing key"))?;
    Ok((key.serialize_pem(), key.public_key_pem()))
}

/// A random bearer token (32 hex digits) for the admin user of the static token file.
///
/// Drawn from the standard library's randomly seeded hasher state: unguessable enough for an
/// API server that listens on loopback for the length of a test.
pub(super) fn token() -> String {
    let mut out = String::with_capacity(32);
    for part in 0..2u64 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(part);
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default(),
        );
        hasher.write_u32(std::process::id());
        out.push_str(&format!("{:016x}", hasher.finish()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ca_signs_a_serving_certificate_for_loopback() {
        let ca = CertificateAuthority::new("kbr-envtest-ca").expect("CA");
        assert!(ca.cert_pem().starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(!ca.cert_der().is_empty());
        let serving = ca
            .serving_cert("kube-apiserver", &["127.0.0.1", "localhost"])
            .expect("serving cert");
        assert!(serving.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(serving.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
    }

    #[test]
    fn keys_and_tokens_are_fresh() {
        let (private, public) = signing_key().expect("key");
        assert!(private.contains("PRIVATE KEY") && public.contains("PUBLIC KEY"));
        let (a, b) = (token(), token());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
