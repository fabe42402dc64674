//! What a run writes survives a crash and is checked when read back.
//!
//! Files are written atomically (a temporary file in the same folder, fsync,
//! rename, fsync of the folder), and every checkpoint carries a manifest with
//! the BLAKE3 hash of each of its files and of the run's `run.json`. Loading
//! verifies the manifest and names the first file that does not match.

use crate::base::error::{LearnError, Result};
use proprio::serde_json;
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The manifest inside a checkpoint folder.
pub const MANIFEST: &str = "manifest.json";
/// `run.json` as named from inside a checkpoint folder.
const RUN_INFO: &str = "../run.json";

/// Writes `bytes` to `path` so that a crash leaves either the old file or the new one, never half.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let temp = path.with_file_name(format!(".{name}.tmp"));
    let write = || -> std::io::Result<()> {
        let mut file = File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()
    };
    if let Err(e) = write() {
        // Best effort: a full disk must not also leave the temporary file behind.
        let _ = fs::remove_file(&temp);
        return Err(LearnError::io(path)(e));
    }
    fs::rename(&temp, path).map_err(LearnError::io(path))?;
    sync_dir(path.parent().unwrap_or(Path::new(".")))
}

/// Flushes a folder's entries (new names, renames) to disk.
pub fn sync_dir(dir: &Path) -> Result<()> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(LearnError::io(dir))
}

fn hash_file(path: &Path) -> Result<String> {
    let bytes = fs::read(path).map_err(|e| LearnError::Checkpoint {
        path: path.to_path_buf(),
        message: format!("cannot read: {e}"),
    })?;
    Ok(blake3::hash(&bytes).to_hex().to_string())
}

/// Syncs every file of a finished checkpoint folder and writes its manifest
/// (the files' hashes and `run.json`'s); the folder is then ready to be renamed into place.
pub fn seal(checkpoint: &Path) -> Result<()> {
    let mut files = BTreeMap::new();
    let entries = fs::read_dir(checkpoint).map_err(LearnError::io(checkpoint))?;
    for entry in entries {
        let path = entry.map_err(LearnError::io(checkpoint))?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let Some(name) = name.filter(|n| n != MANIFEST && path.is_file()) else {
            continue;
        };
        File::open(&path)
            .and_then(|f| f.sync_all())
            .map_err(LearnError::io(&path))?;
        files.insert(name, hash_file(&path)?);
    }
    files.insert(RUN_INFO.into(), hash_file(&checkpoint.join(RUN_INFO))?);
    let manifest = serde_json::json!({ "hash": "blake3", "files": files });
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| LearnError::Checkpoint {
        path: checkpoint.join(MANIFEST),
        message: e.to_string(),
    })?;
    write_atomic(&checkpoint.join(MANIFEST), text.as_bytes())
}

/// Checks every file the manifest lists; the error names the first missing or corrupt one.
/// A checkpoint without a manifest (written before manifests existed) is accepted as it is.
pub fn verify(checkpoint: &Path) -> Result<()> {
    let path = checkpoint.join(MANIFEST);
    if !path.exists() {
        return Ok(());
    }
    let corrupt = |path: PathBuf, message: String| LearnError::Checkpoint { path, message };
    let text = fs::read_to_string(&path)
        .map_err(|e| corrupt(path.clone(), format!("cannot read: {e}")))?;
    let manifest: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| corrupt(path.clone(), format!("corrupt manifest: {e}")))?;
    let files = manifest["files"]
        .as_object()
        .ok_or_else(|| corrupt(path.clone(), "corrupt manifest: no file list".into()))?;
    for (name, expected) in files {
        let file = checkpoint.join(name);
        if !file.exists() {
            return Err(corrupt(file, "missing from the checkpoint".into()));
        }
        if expected.as_str() != Some(hash_file(&file)?.as_str()) {
            return Err(corrupt(
                file,
                "corrupt: its BLAKE3 hash differs from the one recorded when it was written".into(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "../../../../tests/support/scratch.rs"]
mod scratch;

#[cfg(test)]
mod tests {
    use super::scratch::Scratch;
    use super::*;

    /// A run folder with an empty `checkpoint/`, removed when the test ends.
    fn scratch(name: &str) -> Scratch {
        let dir = Scratch::new(&format!("integrity-{name}"));
        fs::create_dir_all(dir.join("checkpoint")).unwrap();
        dir
    }

    #[test]
    fn a_flipped_bit_anywhere_is_named() {
        let run = scratch("flip");
        let ckpt = run.join("checkpoint");
        fs::write(run.join("run.json"), "{}").unwrap();
        fs::write(ckpt.join("model.bpk"), vec![7u8; 1000]).unwrap();
        write_atomic(&ckpt.join("state.json"), b"{\"step\": 1}").unwrap();
        seal(&ckpt).unwrap();
        verify(&ckpt).unwrap();
        for (file, at) in [(ckpt.join("model.bpk"), 500), (run.join("run.json"), 0)] {
            let clean = fs::read(&file).unwrap();
            let mut bytes = clean.clone();
            bytes[at] ^= 0b0001_0000;
            fs::write(&file, &bytes).unwrap();
            let err = verify(&ckpt).unwrap_err().to_string();
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            assert!(err.contains(&name) && err.contains("corrupt"), "{err}");
            fs::write(&file, clean).unwrap();
        }
        fs::remove_file(ckpt.join("state.json")).unwrap();
        let err = verify(&ckpt).unwrap_err().to_string();
        assert!(
            err.contains("state.json") && err.contains("missing"),
            "{err}"
        );
    }

    #[test]
    fn an_atomic_write_replaces_the_file_and_leaves_no_temporary() {
        let run = scratch("atomic");
        let path = run.join("a.json");
        write_atomic(&path, b"old").unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        let names: Vec<_> = fs::read_dir(&*run)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }
}
