//! The docker-archive that `podman save --format docker-archive` writes and `podman load`
//! reads: `manifest.json` (`[{Config, RepoTags, Layers}]`), the config JSON and one
//! uncompressed tar per layer, all at the top level (podman also writes legacy
//! `<id>/layer.tar` symlinks and `repositories`, which are not needed).

use std::fs::File;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// A saved image, unpacked in a directory.
#[derive(Debug)]
pub struct Saved {
    /// Its config (rootfs.diff_ids, history, labels...).
    pub config: Value,
    /// Its layer tars, lowest first.
    pub layers: Vec<PathBuf>,
    /// Their diff ids (`sha256:<hex>`), from the config, in the same order.
    pub diff_ids: Vec<String>,
    /// Their sizes in bytes.
    pub sizes: Vec<u64>,
}

fn bad(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("the saved image: {}", message.into()))
}

/// Unpacks the top-level files of docker-archive `archive` into `dir` and reads them.
///
/// # Errors
///
/// An archive that cannot be read, a manifest without exactly one image, a layer count that
/// does not match the config's diff ids.
pub fn unpack(archive: &Path, dir: &Path) -> io::Result<Saved> {
    let mut tar = tar::Archive::new(File::open(archive)?);
    for entry in tar.entries()? {
        let mut entry = entry?;
        let name = entry.path_bytes().into_owned();
        let plain = !name.is_empty() && !name.contains(&b'/') && name != b"." && name != b"..";
        if entry.header().entry_type().is_file() && plain {
            let path = dir.join(String::from_utf8_lossy(&name).as_ref());
            io::copy(&mut entry, &mut File::create(path)?)?;
        }
    }
    let manifest: Value = read_json(&dir.join("manifest.json"))?;
    let [image] = manifest.as_array().map(Vec::as_slice).unwrap_or_default() else {
        return Err(bad("manifest.json does not list exactly one image"));
    };
    let file = |v: &Value| v.as_str().filter(|s| !s.contains('/')).map(|s| dir.join(s));
    let config_path = image.get("Config").and_then(file).ok_or_else(|| bad("no Config in manifest.json"))?;
    let config = read_json(&config_path)?;
    let layers: Vec<PathBuf> = image
        .get("Layers")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no Layers in manifest.json"))?
        .iter()
        .map(|l| file(l).ok_or_else(|| bad(format!("layer {l} is not a top-level file"))))
        .collect::<io::Result<_>>()?;
    let diff_ids: Vec<String> = config
        .pointer("/rootfs/diff_ids")
        .and_then(Value::as_array)
        .map(|ids| ids.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    if diff_ids.len() != layers.len() {
        return Err(bad(format!("{} layers but {} diff ids in its config", layers.len(), diff_ids.len())));
    }
    let sizes = layers.iter().map(|l| std::fs::metadata(l).map(|m| m.len())).collect::<io::Result<_>>()?;
    Ok(Saved { config, layers, diff_ids, sizes })
}

fn read_json(path: &Path) -> io::Result<Value> {
    let mut text = String::new();
    File::open(path)?.read_to_string(&mut text)?;
    serde_json::from_str(&text).map_err(|e| bad(format!("{}: {e}", path.display())))
}

/// Writes docker-archive `out`: image `config` tagged `reference`, with `layers` (diff id,
/// tar file) lowest first. Returns the image id (`sha256:<hex>` of the config bytes).
///
/// # Errors
///
/// Write errors.
pub fn write(
    out: &Path,
    reference: &str,
    config: &Value,
    layers: &[(String, PathBuf)],
) -> io::Result<String> {
    let config_bytes = serde_json::to_vec(config).map_err(io::Error::other)?;
    let hex: String = Sha256::digest(&config_bytes).iter().map(|b| format!("{b:02x}")).collect();
    let config_name = format!("{hex}.json");
    let names: Vec<String> =
        layers.iter().map(|(id, _)| format!("{}.tar", id.trim_start_matches("sha256:"))).collect();
    let manifest = json!([{"Config": config_name, "RepoTags": [reference], "Layers": names}]);
    let mut builder = tar::Builder::new(io::BufWriter::new(File::create(out)?));
    let mut add = |name: &str, bytes: &[u8]| {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o444);
        builder.append_data(&mut header, name, bytes)
    };
    add(&config_name, &config_bytes)?;
    add("manifest.json", &serde_json::to_vec(&manifest).map_err(io::Error::other)?)?;
    let mut written: Vec<&str> = Vec::new();
    for (name, (_, path)) in names.iter().zip(layers) {
        // The same layer twice is stored once.
        if written.contains(&name.as_str()) {
            continue;
        }
        written.push(name);
        let mut file = File::open(path)?;
        let mut header = tar::Header::new_gnu();
        header.set_size(file.metadata()?.len());
        header.set_mode(0o444);
        builder.append_data(&mut header, name, &mut file)?;
    }
    builder.into_inner()?.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    Ok(format!("sha256:{hex}"))
}
