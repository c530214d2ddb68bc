//! Names the server makes up: `generateName` suffixes and `metadata.uid`s.
//!
//! The apiserver appends 5 characters from `bcdfghjklmnpqrstvwxz2456789` (no vowels, no
//! look-alike digits; `k8s.io/apimachinery/pkg/util/rand`) to `generateName`, and gives every
//! object a random UUID. The fake draws both from a small SplitMix64 generator so a test can
//! make them reproducible with [`crate::FakeApiServerBuilder::seed`].

/// The alphabet of `generateName` suffixes, as in `utilrand.String`.
const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Length of a `generateName` suffix.
pub(crate) const SUFFIX_LEN: usize = 5;

/// A SplitMix64 pseudo-random generator (not cryptographic; names and uids only).
#[derive(Clone, Debug)]
pub(crate) struct NameGenerator {
    state: u64,
}

impl NameGenerator {
    /// A generator with a fixed seed: the same seed gives the same names.
    pub(crate) fn seeded(seed: u64) -> Self {
        Self { state: seed }
    }

    /// A generator seeded from the clock and the process id.
    pub(crate) fn from_entropy() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Self::seeded(nanos ^ (u64::from(std::process::id()) << 32))
    }

    /// The next pseudo-random number.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `prefix` plus 5 random characters.
    pub(crate) fn generate_name(&mut self, prefix: &str) -> String {
        let mut name = String::with_capacity(prefix.len() + SUFFIX_LEN);
        name.push_str(prefix);
        for _ in 0..SUFFIX_LEN {
            let i = (self.next_u64() % ALPHABET.len() as u64) as usize;
            name.push(char::from(ALPHABET[i]));
        }
        name
    }

    /// A random (version 4) UUID in its textual form.
    pub(crate) fn uid(&mut self) -> String {
        let hi = self.next_u64();
        let lo = self.next_u64();
        let hi = (hi & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000;
        let lo = (lo & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
        format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            hi >> 32,
            (hi >> 16) & 0xFFFF,
            hi & 0xFFFF,
            lo >> 48,
            lo & 0xFFFF_FFFF_FFFF
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_names_repeat_and_have_the_apiserver_shape() {
        let mut a = NameGenerator::seeded(7);
        let mut b = NameGenerator::seeded(7);
        let name = a.generate_name("web-");
        assert_eq!(name, b.generate_name("web-"));
        assert_eq!(name.len(), 9);
        assert!(name[4..].bytes().all(|c| ALPHABET.contains(&c)));
        let uid = a.uid();
        assert_eq!(uid.len(), 36);
        assert_eq!(&uid[14..15], "4");
    }
}
