//! A hash map for the engine's own keys (node pairs, flow routes): small runs of integers
//! that no user chooses, looked up once or more per message. The standard SipHash resists
//! keys chosen to collide, which these cannot be, and was 3–7 % of a replay's time; this
//! hasher folds each word in with a rotate, a xor and a multiply (the Fx hash of rustc).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` hashed by [`WordHasher`].
pub type WordMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;

/// The Fx hash: per word, `h = (h.rotl(5) ^ word) · K`; the finish rotates the
/// multiply's well-mixed high bits down to where the table takes its index.
#[derive(Clone, Copy, Debug, Default)]
pub struct WordHasher(u64);

const K: u64 = 0xf135_7aea_2e62_a9c5;

impl WordHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, x: u8) {
        self.add(u64::from(x));
    }

    fn write_u32(&mut self, x: u32) {
        self.add(u64::from(x));
    }

    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }

    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }

    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{HashMap, HashSet};
    use std::hash::{BuildHasher, Hash};

    fn hash<T: Hash>(x: &T) -> u64 {
        BuildHasherDefault::<WordHasher>::default().hash_one(x)
    }

    #[test]
    fn node_pairs_spread_over_a_tables_buckets() {
        // 64 × 64 node pairs into 4,096 buckets (the low 12 bits): most land alone.
        let buckets: HashSet<u64> = (0..64usize)
            .flat_map(|a| (0..64usize).map(move |b| hash(&(a, b)) & 0xfff))
            .collect();
        assert!(buckets.len() > 2_400, "{} distinct buckets", buckets.len());
    }

    proptest! {
        /// A map keyed by the word hash finds what a standard one finds.
        #[test]
        fn it_maps_as_the_standard_map_does(keys in proptest::collection::vec((0usize..50, 0usize..50, any::<u8>()), 0..200)) {
            let mut ours: WordMap<(usize, usize), u8> = WordMap::default();
            let mut std_map = HashMap::new();
            for &(a, b, v) in &keys {
                ours.insert((a, b), v);
                std_map.insert((a, b), v);
            }
            prop_assert_eq!(ours.len(), std_map.len());
            for (k, v) in &std_map {
                prop_assert_eq!(ours.get(k), Some(v));
            }
        }
    }
}
