//! The storage of a connection's path states: a vector sorted by path ID, with the subset of a
//! `BTreeMap<PathId, Path>`'s methods that [`PathSet`](super::path_set::PathSet) uses.
//!
//! A connection has one path, or a few, and looks one up several times for every datagram it builds or
//! receives. A B-tree node holds its values inline, so each lookup walked a node of eleven 2.2 KB
//! `Path` slots; a sorted vector answers with a binary search over the paths themselves (one comparison for
//! one path) and iterates them in path-ID order, as the map did. Insertion and removal move the paths after
//! the position; both happen only when a path opens or its abandoned state is deleted.

use crate::cc::PathId;

use super::paths::Path;

/// Paths sorted by ID, each ID once (`items[i].id < items[i + 1].id`).
#[derive(Debug, Default)]
pub(super) struct PathMap {
    items: Vec<Path>,
}

impl PathMap {
    /// The position of path `id`, or where it would be inserted.
    #[inline]
    fn search(&self, id: PathId) -> Result<usize, usize> {
        self.items.binary_search_by_key(&id, |p| p.id)
    }

    /// The path `id`.
    #[inline]
    pub(super) fn get(&self, id: &PathId) -> Option<&Path> {
        let i = self.search(*id).ok()?;
        self.items.get(i)
    }

    /// The path `id`, to change.
    #[inline]
    pub(super) fn get_mut(&mut self, id: &PathId) -> Option<&mut Path> {
        let i = self.search(*id).ok()?;
        self.items.get_mut(i)
    }

    /// Whether path `id` is stored.
    #[inline]
    pub(super) fn contains_key(&self, id: &PathId) -> bool {
        self.search(*id).is_ok()
    }

    /// Number of paths.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.items.len()
    }

    /// The paths in path-ID order.
    #[inline]
    pub(super) fn values(&self) -> std::slice::Iter<'_, Path> {
        self.items.iter()
    }

    /// The paths in path-ID order, to change.
    #[inline]
    pub(super) fn values_mut(&mut self) -> std::slice::IterMut<'_, Path> {
        self.items.iter_mut()
    }

    /// The path IDs in order.
    #[inline]
    pub(super) fn keys(&self) -> impl Iterator<Item = &PathId> + '_ {
        self.items.iter().map(|p| &p.id)
    }

    /// The paths with an ID above `after` (all of them for `None`), in path-ID order.
    #[inline]
    pub(super) fn after(&self, after: Option<PathId>) -> std::slice::Iter<'_, Path> {
        let start = after.map_or(0, |a| match self.search(a) {
            Ok(i) => i + 1,
            Err(i) => i,
        });
        self.items.get(start..).unwrap_or_default().iter()
    }

    /// Stores `path` under its own ID, replacing (and returning) a path stored under that ID.
    pub(super) fn insert(&mut self, path: Path) -> Option<Path> {
        match self.search(path.id) {
            Ok(i) => self.items.get_mut(i).map(|slot| std::mem::replace(slot, path)),
            Err(i) => {
                self.items.insert(i, path);
                None
            }
        }
    }

    /// Removes path `id` and returns it.
    pub(super) fn remove(&mut self, id: &PathId) -> Option<Path> {
        let i = self.search(*id).ok()?;
        Some(self.items.remove(i))
    }
}
