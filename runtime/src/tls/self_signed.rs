//! [`SelfSignedCertificate`]: a CA and a serving certificate made in memory for local
//! development (no cert-manager needed).

use super::TlsError;

/// A CA and a serving certificate it signed, generated in memory: what `make run` serves
/// webhooks with when there is no cert-manager (Kubebuilder users otherwise generate these by
/// hand; Kubebuilder issues #400, #2837, #4477).
///
/// Register [`ca_pem`](Self::ca_pem) as the `caBundle` of the webhook configurations; the
/// serving certificate is valid for `hosts` (DNS names or IP addresses).
///
/// ```
/// use kbr_runtime::tls::SelfSignedCertificate;
/// let certs = SelfSignedCertificate::generate(&["localhost", "127.0.0.1"]).unwrap();
/// assert!(certs.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
/// assert!(certs.key_pem.contains("PRIVATE KEY"));
/// ```
#[derive(Clone)]
pub struct SelfSignedCertificate {
    /// The CA certificate (PEM): the `caBundle` clients trust.
    pub ca_pem: String,
    /// The serving certificate (PEM), signed by the CA.
    pub cert_pem: String,
    /// The serving certificate's private key (PEM, PKCS#8).
    pub key_pem: String,
}

impl std::fmt::Debug for SelfSignedCertificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelfSignedCertificate")
            .field("ca_pem", &self.ca_pem)
            .finish_non_exhaustive()
    }
}

/// The hosts a generated serving certificate is valid for by default.
pub const DEFAULT_SELF_SIGNED_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1"];

impl SelfSignedCertificate {
    /// Generates a fresh CA (ECDSA P-256) and a serving certificate for `hosts`.
    ///
    /// # Errors
    /// [`TlsError::SelfSigned`] when a host is not a valid DNS name or IP address.
    pub fn generate(hosts: &[impl AsRef<str>]) -> Result<Self, TlsError> {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
            KeyPair, KeyUsagePurpose,
        };
        let error = |e: rcgen::Error| TlsError::SelfSigned(e.to_string());

        let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(error)?;
        ca.distinguished_name
            .push(DnType::CommonName, "kbr local webhook CA");
        ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_key = KeyPair::generate().map_err(error)?;
        let ca_cert = ca.self_signed(&ca_key).map_err(error)?;
        let issuer = Issuer::new(ca, ca_key);

        let names: Vec<String> = hosts.iter().map(|h| h.as_ref().to_string()).collect();
        let mut serving = CertificateParams::new(names).map_err(error)?;
        serving
            .distinguished_name
            .push(DnType::CommonName, "kbr webhook server");
        serving.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        serving.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        serving.use_authority_key_identifier_extension = true;
        let key = KeyPair::generate().map_err(error)?;
        let cert = serving.signed_by(&key, &issuer).map_err(error)?;
        Ok(Self {
            ca_pem: ca_cert.pem(),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}
