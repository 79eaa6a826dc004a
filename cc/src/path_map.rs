//! [`PathMap`]: per-path state keyed by [`PathId`], iterated in path-ID order.
//!
//! A connection has few paths (the multipath draft asks endpoints to keep the number small), so a sorted
//! vector beats a hash map and, unlike one, iterates deterministically: the same events always give the same
//! windows.

use crate::PathId;

/// A small map from [`PathId`] to `T`, sorted by path ID.
#[derive(Clone, Debug)]
pub struct PathMap<T> {
    entries: Vec<(PathId, T)>,
}

impl<T> Default for PathMap<T> {
    fn default() -> Self {
        PathMap { entries: Vec::new() }
    }
}

impl<T> PathMap<T> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    fn position(&self, path: PathId) -> Result<usize, usize> {
        self.entries.binary_search_by_key(&path, |(id, _)| *id)
    }

    /// Inserts or replaces the state of `path`; returns the previous state.
    pub fn insert(&mut self, path: PathId, value: T) -> Option<T> {
        match self.position(path) {
            Ok(i) => self
                .entries
                .get_mut(i)
                .map(|slot| std::mem::replace(&mut slot.1, value)),
            Err(i) => {
                self.entries.insert(i, (path, value));
                None
            }
        }
    }

    /// Removes the state of `path`.
    pub fn remove(&mut self, path: PathId) -> Option<T> {
        self.position(path).ok().map(|i| self.entries.remove(i).1)
    }

    /// The state of `path`.
    pub fn get(&self, path: PathId) -> Option<&T> {
        self.position(path)
            .ok()
            .and_then(|i| self.entries.get(i))
            .map(|(_, v)| v)
    }

    /// The state of `path`, mutably.
    pub fn get_mut(&mut self, path: PathId) -> Option<&mut T> {
        match self.position(path) {
            Ok(i) => self.entries.get_mut(i).map(|(_, v)| v),
            Err(_) => None,
        }
    }

    /// Whether `path` has state.
    pub fn contains(&self, path: PathId) -> bool {
        self.position(path).is_ok()
    }

    /// Number of paths.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no paths.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Paths and their state, in path-ID order.
    pub fn iter(&self) -> impl Iterator<Item = (PathId, &T)> + Clone + '_ {
        self.entries.iter().map(|(id, v)| (*id, v))
    }

    /// Paths and their mutable state, in path-ID order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (PathId, &mut T)> + '_ {
        self.entries.iter_mut().map(|(id, v)| (*id, v))
    }

    /// The states, in path-ID order.
    pub fn values(&self) -> impl Iterator<Item = &T> + Clone + '_ {
        self.entries.iter().map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_path_order_and_replaces() {
        let mut m = PathMap::new();
        assert_eq!(m.insert(PathId(3), "c"), None);
        assert_eq!(m.insert(PathId(1), "a"), None);
        assert_eq!(m.insert(PathId(2), "b"), None);
        assert_eq!(m.insert(PathId(2), "B"), Some("b"));
        let ids: Vec<u32> = m.iter().map(|(id, _)| id.0).collect();
        assert_eq!(ids, vec![1, 2, 3]);
        assert_eq!(m.get(PathId(2)), Some(&"B"));
        assert_eq!(m.remove(PathId(1)), Some("a"));
        assert_eq!(m.get(PathId(1)), None);
        assert_eq!(m.len(), 2);
    }
}
