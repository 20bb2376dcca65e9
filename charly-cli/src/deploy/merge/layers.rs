//! Consecutive layer tars merged into one layer tar that, applied over the layers below
//! them, gives the same filesystem as applying them one after another.
//!
//! Rules (the reference's `image.merge`, made exact for the layers *below* the group):
//! - last writer wins per path; a path keeps the place of its first appearance;
//! - `D/.wh.<name>` removes `D/<name>` and everything under it written by an earlier layer
//!   of the group, and stays in the merged layer (it hides the layers below too); a later
//!   layer that writes `D/<name>` again drops the whiteout, and when it writes a directory
//!   there the merged layer gets `D/<name>/.wh..wh..opq` instead, so the old directory's
//!   contents below stay hidden;
//! - `D/.wh..wh..opq` removes everything under `D` written by an earlier layer, and stays;
//! - a non-directory written over a path removes what earlier layers wrote beneath it.
//!
//! Entries are not buffered: each keeps its header, its PAX records (xattrs, long times)
//! and where its data sits in its layer file, and the data is copied from there.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use tar::{EntryType, Header};

/// The whiteout prefix of a deleted `<name>` (`.wh.<name>`), OCI and AUFS alike.
pub const WHITEOUT: &[u8] = b".wh.";
/// The opaque-directory marker: the directory's lower contents are hidden.
pub const OPAQUE: &[u8] = b".wh..wh..opq";

/// What [`merge`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergedLayer {
    /// `sha256:<hex>` of the uncompressed tar (its diff id).
    pub diff_id: String,
    /// Its size in bytes.
    pub size: u64,
    /// How many entries it holds.
    pub entries: usize,
}

/// One entry kept for the merged layer.
#[derive(Clone)]
struct Kept {
    header: Header,
    name: Vec<u8>,
    link: Option<Vec<u8>>,
    pax: Vec<(String, Vec<u8>)>,
    /// (layer, data offset in its file, size).
    data: (usize, u64, u64),
    layer: usize,
    is_dir: bool,
}

/// The merged tree: entries in first-appearance order, indexed by normalised path.
#[derive(Default)]
struct Tree {
    slots: Vec<Option<Kept>>,
    index: BTreeMap<Vec<u8>, usize>,
}

impl Tree {
    fn remove(&mut self, key: &[u8]) -> Option<Kept> {
        let slot = self.index.remove(key)?;
        self.slots[slot].take()
    }

    /// Removes what layers before `layer` wrote strictly beneath `dir` (`""`: the root).
    fn remove_beneath(&mut self, dir: &[u8], layer: usize) {
        let beneath: Vec<Vec<u8>> = if dir.is_empty() {
            self.index.keys().filter(|k| !k.is_empty()).cloned().collect()
        } else {
            let mut low = dir.to_vec();
            low.push(b'/');
            let mut high = dir.to_vec();
            high.push(b'/' + 1);
            self.index.range(low..high).map(|(k, _)| k.clone()).collect()
        };
        for key in beneath {
            let slot = self.index[&key];
            if self.slots[slot].as_ref().is_some_and(|k| k.layer < layer) {
                self.remove(&key);
            }
        }
    }

    /// Puts `kept` at `key`: in place when the path is there, else at the end.
    fn put(&mut self, key: Vec<u8>, kept: Kept) {
        match self.index.get(&key) {
            Some(&slot) => self.slots[slot] = Some(kept),
            None => {
                self.index.insert(key, self.slots.len());
                self.slots.push(Some(kept));
            }
        }
    }
}

/// `./a/b/`, `/a/b` and `a/b` are all `a/b`; the root is `""`.
pub fn normalise(name: &[u8]) -> Vec<u8> {
    let mut s = name;
    loop {
        if let Some(rest) = s.strip_prefix(b"./") {
            s = rest;
        } else if let Some(rest) = s.strip_prefix(b"/") {
            s = rest;
        } else {
            break;
        }
    }
    while let Some(rest) = s.strip_suffix(b"/") {
        s = rest;
    }
    if s == b"." { Vec::new() } else { s.to_vec() }
}

/// `(parent, base)` of a normalised path.
fn split(key: &[u8]) -> (&[u8], &[u8]) {
    match key.iter().rposition(|b| *b == b'/') {
        Some(i) => (&key[..i], &key[i + 1..]),
        None => (&[], key),
    }
}

fn join(dir: &[u8], base: &[u8]) -> Vec<u8> {
    if dir.is_empty() {
        return base.to_vec();
    }
    let mut out = dir.to_vec();
    out.push(b'/');
    out.extend_from_slice(base);
    out
}

fn bad(layer: &Path, message: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("layer {}: {message}", layer.display()))
}

/// Merges the layer tars `layers` (lowest first) into one tar written to `out`.
///
/// # Errors
///
/// A layer that cannot be read or is not a tar, a sparse file (not supported), a write error.
pub fn merge(layers: &[PathBuf], out: &Path) -> io::Result<MergedLayer> {
    let mut tree = Tree::default();
    for (layer, path) in layers.iter().enumerate() {
        read_layer(&mut tree, layer, path)?;
    }
    let mut files = layers.iter().map(File::open).collect::<io::Result<Vec<File>>>()?;
    let writer = Hashing { inner: io::BufWriter::new(File::create(out)?), hasher: Sha256::new(), count: 0 };
    let mut builder = tar::Builder::new(writer);
    let mut entries = 0;
    for kept in tree.slots.into_iter().flatten() {
        let Kept { mut header, name, link, pax, data: (layer, offset, size), .. } = kept;
        if !pax.is_empty() {
            builder.append_pax_extensions(pax.iter().map(|(k, v)| (k.as_str(), v.as_slice())))?;
        }
        let name =
            if name.is_empty() { PathBuf::from("./") } else { PathBuf::from(OsStr::from_bytes(&name)) };
        match link {
            Some(target) => builder.append_link(&mut header, &name, OsStr::from_bytes(&target))?,
            None => {
                let file = &mut files[layer];
                file.seek(SeekFrom::Start(offset))?;
                header.set_size(size);
                builder.append_data(&mut header, &name, Read::take(&mut *file, size))?;
            }
        }
        entries += 1;
    }
    let mut writer = builder.into_inner()?;
    writer.inner.flush()?;
    let digest = writer.hasher.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok(MergedLayer { diff_id: format!("sha256:{hex}"), size: writer.count, entries })
}

fn read_layer(tree: &mut Tree, layer: usize, path: &Path) -> io::Result<()> {
    let mut archive = tar::Archive::new(File::open(path)?);
    for entry in archive.entries().map_err(|e| bad(path, e))? {
        let mut entry = entry.map_err(|e| bad(path, e))?;
        let kind = entry.header().entry_type();
        match kind {
            EntryType::XGlobalHeader => continue,
            EntryType::GNUSparse => {
                let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
                return Err(bad(path, format!("{name} is a sparse file, which box.merge does not merge")));
            }
            _ => {}
        }
        let name = entry.path_bytes().into_owned();
        let key = normalise(&name);
        let link = match kind {
            EntryType::Link | EntryType::Symlink => entry.link_name_bytes().map(|l| l.into_owned()),
            _ => None,
        };
        let mut pax = Vec::new();
        if let Some(extensions) = entry.pax_extensions().map_err(|e| bad(path, e))? {
            for ext in extensions {
                let ext = ext.map_err(|e| bad(path, e))?;
                let Ok(k) = ext.key() else { continue };
                if !matches!(k, "path" | "linkpath" | "size") {
                    pax.push((k.to_owned(), ext.value_bytes().to_vec()));
                }
            }
        }
        let kept = Kept {
            header: entry.header().clone(),
            name: key.clone(),
            link,
            pax,
            data: (layer, entry.raw_file_position(), entry.size()),
            layer,
            is_dir: kind == EntryType::Directory,
        };
        apply(tree, key, kept);
    }
    Ok(())
}

fn apply(tree: &mut Tree, key: Vec<u8>, kept: Kept) {
    let layer = kept.layer;
    let (dir, base) = split(&key);
    if base == OPAQUE {
        tree.remove_beneath(dir, layer);
        tree.put(key, kept);
        return;
    }
    if let Some(name) = base.strip_prefix(WHITEOUT) {
        let target = join(dir, name);
        if tree.index.get(&target).and_then(|s| tree.slots[*s].as_ref()).is_some_and(|k| k.layer < layer) {
            tree.remove(&target);
        }
        tree.remove_beneath(&target, layer);
        tree.put(key, kept);
        return;
    }
    let whiteout = join(dir, &[WHITEOUT, base].concat());
    let hidden = tree.remove(&whiteout);
    if !kept.is_dir {
        tree.remove_beneath(&key, layer);
    }
    let is_dir = kept.is_dir;
    tree.put(key.clone(), kept);
    // A directory written where an earlier layer of the group deleted one: what the layers
    // below had in it stays hidden.
    if let (Some(mut marker), true) = (hidden, is_dir) {
        let opaque = join(&key, OPAQUE);
        marker.name = opaque.clone();
        tree.put(opaque, marker);
    }
}

/// A writer that hashes and counts what passes through it.
struct Hashing<W> {
    inner: W,
    hasher: Sha256,
    count: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.count += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(dir: &Path, name: &str, entries: &[(&str, Option<&str>)]) -> PathBuf {
        let path = dir.join(name);
        let mut b = tar::Builder::new(File::create(&path).unwrap());
        for (p, content) in entries {
            let mut h = Header::new_gnu();
            match content {
                Some(c) => {
                    h.set_entry_type(EntryType::Regular);
                    h.set_size(c.len() as u64);
                    h.set_mode(0o644);
                    b.append_data(&mut h, p, c.as_bytes()).unwrap();
                }
                None => {
                    h.set_entry_type(EntryType::Directory);
                    h.set_size(0);
                    h.set_mode(0o755);
                    b.append_data(&mut h, p, io::empty()).unwrap();
                }
            }
        }
        b.finish().unwrap();
        path
    }

    fn listing(path: &Path) -> Vec<(String, String)> {
        let mut a = tar::Archive::new(File::open(path).unwrap());
        a.entries()
            .unwrap()
            .map(|e| {
                let mut e = e.unwrap();
                let name = String::from_utf8_lossy(&e.path_bytes()).into_owned();
                let mut s = String::new();
                e.read_to_string(&mut s).unwrap();
                (name, s)
            })
            .collect()
    }

    #[test]
    fn last_writer_wins_in_first_place_and_whiteouts_apply() {
        let d = tempfile::tempdir().unwrap();
        let l1 = layer(
            d.path(),
            "1.tar",
            &[
                ("a", None),
                ("a/x", Some("1")),
                ("a/y", Some("1")),
                ("gone", Some("1")),
                ("o", None),
                ("o/old", Some("1")),
            ],
        );
        let l2 = layer(
            d.path(),
            "2.tar",
            &[("a/x", Some("2")), (".wh.gone", Some("")), ("o/.wh..wh..opq", Some("")), ("o/new", Some("2"))],
        );
        let l3 = layer(d.path(), "3.tar", &[(".wh.a", Some("")), ("a", None), ("a/z", Some("3"))]);
        let out = d.path().join("m.tar");
        let merged = merge(&[l1, l2, l3], &out).unwrap();
        let got = listing(&out);
        let want: Vec<(String, String)> = [
            ("o", ""),
            (".wh.gone", ""),
            ("o/.wh..wh..opq", ""),
            ("o/new", "2"),
            ("a", ""),
            ("a/.wh..wh..opq", ""),
            ("a/z", "3"),
        ]
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
        assert_eq!(got, want);
        assert_eq!(merged.entries, 7);
        assert_eq!(merged.size, std::fs::metadata(&out).unwrap().len());
        assert!(merged.diff_id.starts_with("sha256:") && merged.diff_id.len() == 71);
    }

    #[test]
    fn a_file_readded_after_its_whiteout_drops_the_whiteout() {
        let d = tempfile::tempdir().unwrap();
        let l1 = layer(d.path(), "1.tar", &[("./etc/", None), ("./etc/f", Some("1"))]);
        let l2 = layer(d.path(), "2.tar", &[("etc/.wh.f", Some(""))]);
        let l3 = layer(d.path(), "3.tar", &[("etc/f", Some("3"))]);
        let out = d.path().join("m.tar");
        merge(&[l1, l2, l3], &out).unwrap();
        assert_eq!(listing(&out), vec![("etc".into(), String::new()), ("etc/f".into(), "3".into())]);
    }

    #[test]
    fn links_long_names_and_xattrs_pass_through() {
        let d = tempfile::tempdir().unwrap();
        let long = format!("d/{}", "n".repeat(150));
        let l1 = layer(d.path(), "1.tar", &[("d", None), (long.as_str(), Some("long"))]);
        let l2 = d.path().join("2.tar");
        {
            let mut b = tar::Builder::new(File::create(&l2).unwrap());
            b.append_pax_extensions([("SCHILY.xattr.security.capability", &b"\x01\x02"[..])]).unwrap();
            let mut h = Header::new_ustar();
            h.set_entry_type(EntryType::Regular);
            h.set_size(1);
            b.append_data(&mut h, "ping", &b"p"[..]).unwrap();
            for (kind, name, target) in
                [(EntryType::Symlink, "sym", "ping"), (EntryType::Link, "hard", "ping")]
            {
                let mut h = Header::new_gnu();
                h.set_entry_type(kind);
                h.set_size(0);
                b.append_link(&mut h, name, target).unwrap();
            }
            b.finish().unwrap();
        }
        let out = d.path().join("m.tar");
        merge(&[l1, l2], &out).unwrap();
        let mut a = tar::Archive::new(File::open(&out).unwrap());
        let mut seen = Vec::new();
        for e in a.entries().unwrap() {
            let mut e = e.unwrap();
            let name = String::from_utf8_lossy(&e.path_bytes()).into_owned();
            let link = e.link_name_bytes().map(|l| String::from_utf8_lossy(&l).into_owned());
            let xattr = e
                .pax_extensions()
                .unwrap()
                .and_then(|mut x| {
                    x.find(|x| x.as_ref().unwrap().key() == Ok("SCHILY.xattr.security.capability"))
                })
                .map(|x| x.unwrap().value_bytes().to_vec());
            seen.push((name, link, xattr));
        }
        assert_eq!(seen[1].0, long);
        assert_eq!(seen[2], ("ping".into(), None, Some(vec![1, 2])));
        assert_eq!(seen[3], ("sym".into(), Some("ping".into()), None));
        assert_eq!(seen[4], ("hard".into(), Some("ping".into()), None));
    }

    #[test]
    fn normalise_strips_dots_and_slashes() {
        assert_eq!(normalise(b"./a/b/"), b"a/b");
        assert_eq!(normalise(b"/a"), b"a");
        assert_eq!(normalise(b"./"), b"");
        assert_eq!(normalise(b"."), b"");
    }
}
