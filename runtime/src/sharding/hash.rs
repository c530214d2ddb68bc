//! Rendezvous (highest-random-weight) assignment of object keys to shards.
//!
//! Every (shard, key) pair gets a pseudo-random weight and a key belongs to the shard with the
//! highest weight (Thaler & Ravishankar's HRW). When a shard leaves, only the keys it held move
//! (each to its second-highest shard, spread evenly over the others); when one joins, it takes
//! about `1/N` of the keys from the others. No ring with virtual nodes is needed for an even
//! spread: each key draws independently over the members.
//!
//! The weight must be identical on every replica, across processes, builds and Rust versions:
//! `std`'s `DefaultHasher` is explicitly unspecified and may change between releases, so it is
//! not used. The weight is FNV-1a 64 (the `fnv` crate, a fixed published algorithm, already in
//! the dependency tree through hyper and kube) of `key`, a `0xff` separator (a byte that never
//! occurs in UTF-8, so `("ab","c")` and `("a","bc")` differ) and the shard name, passed through
//! the SplitMix64 finalizer: FNV-1a alone mixes its last bytes poorly, and HRW needs weights whose
//! order looks random for similar shard names (`shard-1`, `shard-2`).

use std::hash::Hasher;

/// The HRW weight of `shard` for `key` (stable across processes and versions).
#[must_use]
pub fn weight(shard: &str, key: &str) -> u64 {
    let mut hasher = fnv::FnvHasher::default();
    hasher.write(key.as_bytes());
    hasher.write(&[0xff]);
    hasher.write(shard.as_bytes());
    splitmix64(hasher.finish())
}

/// SplitMix64's output function (Steele, Lea & Flood 2014): a bijective avalanche mix.
fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The shard among `shards` that owns `key`: the highest [`weight`], ties broken by the larger
/// name so every replica agrees. `None` when `shards` is empty.
///
/// ```
/// use kbr_runtime::sharding::assign;
/// let shards = ["a".to_string(), "b".to_string(), "c".to_string()];
/// let owner = assign("v1/ConfigMap/default/settings", &shards);
/// assert!(owner.is_some_and(|s| shards.iter().any(|x| x == s)));
/// assert_eq!(assign::<String>("v1/ConfigMap/default/settings", &[]), None);
/// ```
#[must_use]
pub fn assign<'a, S: AsRef<str>>(key: &str, shards: &'a [S]) -> Option<&'a str> {
    shards
        .iter()
        .map(AsRef::as_ref)
        .max_by(|a, b| weight(a, key).cmp(&weight(b, key)).then_with(|| a.cmp(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shards(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("shard-{i}")).collect()
    }

    fn keys(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("v1/ConfigMap/ns/obj-{i}")).collect()
    }

    #[test]
    fn weights_are_stable_across_versions() {
        // Pinned values, computed by an independent implementation of FNV-1a 64 + SplitMix64:
        // a change here reassigns every object of every running ring.
        assert_eq!(
            weight("shard-0", "v1/ConfigMap/ns/obj-0"),
            0x1358_f6b9_92f1_5f95
        );
        // FNV-1a 64 of the lone separator byte.
        assert_eq!(weight("", ""), splitmix64(0xaf64_724c_8602_eb6e));
    }

    #[test]
    fn split_is_even() {
        let shards = shards(3);
        let mut counts = [0usize; 3];
        for key in keys(30_000) {
            let owner = assign(&key, &shards).unwrap_or_default();
            let index = shards.iter().position(|s| s == owner).unwrap_or(usize::MAX);
            counts[index] += 1;
        }
        for count in counts {
            assert!((9_000..=11_000).contains(&count), "{counts:?}");
        }
    }

    #[test]
    fn only_the_leaving_shards_keys_move() {
        let (three, two) = (shards(3), shards(2));
        for key in keys(5_000) {
            let before = assign(&key, &three);
            let after = assign(&key, &two);
            if before != Some("shard-2") {
                assert_eq!(before, after, "{key} moved although its shard stayed");
            }
        }
    }

    #[test]
    fn a_joining_shard_takes_about_a_quarter() {
        let (three, four) = (shards(3), shards(4));
        let all = keys(10_000);
        let moved = all
            .iter()
            .filter(|k| assign(k, &three) != assign(k, &four))
            .count();
        assert!((2_200..=2_800).contains(&moved), "{moved} of 10000 moved");
        assert!(
            all.iter()
                .filter(|k| assign(k, &three) != assign(k, &four))
                .all(|k| assign(k, &four) == Some("shard-3"))
        );
    }
}
