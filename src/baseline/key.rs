//! Which file a baseline lives in.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::results::{GpuClass, GpuIdentity};

/// What selects a baseline: the GPU class, optionally one GPU (strict per-UUID baselines) and
/// a name (`None`: the class's default baseline).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaselineKey {
    /// GPU class.
    pub class: GpuClass,
    /// GPU UUID for a baseline of one card.
    pub uuid: Option<String>,
    /// Name; `None` for the default.
    pub name: Option<String>,
}

impl BaselineKey {
    /// The key of `gpu`'s baseline called `name` (`None` or "" for the default); `per_gpu`
    /// keys it by the GPU's UUID as well.
    pub fn for_gpu(gpu: &GpuIdentity, name: Option<&str>, per_gpu: bool) -> Result<Self> {
        let name = name.filter(|n| !n.is_empty()).map(|n| validate_name(n).map(|_| n.to_string())).transpose()?;
        Ok(BaselineKey { class: gpu.class_key(), uuid: per_gpu.then(|| gpu.uuid.clone()), name })
    }

    /// Where the baseline lives in the baselines folder: the class's own folder, and in it
    /// "class.json" (the class's default baseline), "<name>.json", "<uuid>.json" or
    /// "<uuid>.<name>.json", e.g. "nvidia-h200-cc90-132sm-140gib/class.json".
    pub fn relative_path(&self) -> PathBuf {
        let parts: Vec<String> = self.uuid.iter().map(|u| file_safe_uuid(u)).chain(self.name.clone()).collect();
        let file = if parts.is_empty() { "class".to_string() } else { parts.join(".") };
        PathBuf::from(self.class.slug()).join(format!("{file}.json"))
    }

    /// The one-file name of earlier versions, "<class slug>[.<uuid>][.<name>].json" (e.g.
    /// "nvidia-h200-cc90-132sm-140gib.json"), still read where a folder holds one.
    pub fn flat_file_name(&self) -> String {
        let mut s = self.class.slug();
        if let Some(u) = &self.uuid {
            s.push('.');
            s.push_str(&file_safe_uuid(u));
        }
        if let Some(n) = &self.name {
            s.push('.');
            s.push_str(n);
        }
        s.push_str(".json");
        s
    }

    /// "default baseline of nvidia-h200-cc90-132sm-140gib", "baseline `driver570` of ...".
    pub fn describe(&self) -> String {
        let who = match &self.uuid {
            Some(u) => format!("{} ({u})", self.class.slug()),
            None => self.class.slug(),
        };
        match &self.name {
            Some(n) => format!("baseline `{n}` of {who}"),
            None => format!("default baseline of {who}"),
        }
    }
}

/// A GPU UUID as part of a file name: lower case, anything but letters, digits and `-` as `-`.
fn file_safe_uuid(uuid: &str) -> String {
    uuid.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c.to_ascii_lowercase() } else { '-' }).collect()
}

/// Baseline names: 1 to 64 of ASCII letters, digits, `_` and `-`, starting with a letter or a
/// digit (they become part of a file name).
pub fn validate_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    if name.eq_ignore_ascii_case("class") {
        return Err(Error::Usage(
            "bad baseline name `class`: it is the file of the class's default baseline; pick another".into(),
        ));
    }
    if ok {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "bad baseline name `{name}`: use letters, digits, `_` and `-` (at most 64, starting with a letter or digit)"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class() -> GpuClass {
        GpuClass { name: "NVIDIA H200".into(), cc: "9.0".into(), sm_count: 132, memory_gib: 140 }
    }

    #[test]
    fn file_names_follow_class_uuid_and_name() {
        let k = BaselineKey { class: class(), uuid: None, name: None };
        assert_eq!(k.relative_path(), PathBuf::from("nvidia-h200-cc90-132sm-140gib/class.json"));
        assert_eq!(k.flat_file_name(), "nvidia-h200-cc90-132sm-140gib.json");
        let k = BaselineKey { class: class(), uuid: None, name: Some("dissect".into()) };
        assert_eq!(k.relative_path(), PathBuf::from("nvidia-h200-cc90-132sm-140gib/dissect.json"));
        let k = BaselineKey { class: class(), uuid: Some("GPU-0ECB8783-d484".into()), name: Some("r570".into()) };
        assert_eq!(k.relative_path(), PathBuf::from("nvidia-h200-cc90-132sm-140gib/gpu-0ecb8783-d484.r570.json"));
        assert_eq!(k.flat_file_name(), "nvidia-h200-cc90-132sm-140gib.gpu-0ecb8783-d484.r570.json");
        assert_eq!(k.describe(), "baseline `r570` of nvidia-h200-cc90-132sm-140gib (GPU-0ECB8783-d484)");
    }

    #[test]
    fn names_that_would_escape_the_folder_are_refused() {
        for bad in ["", "../x", "a/b", ".hidden", "a.b", "-x", &"x".repeat(65), "class", "Class"] {
            assert!(validate_name(bad).is_err(), "{bad}");
        }
        for good in ["r570", "cuda-13_0", "A1"] {
            assert!(validate_name(good).is_ok(), "{good}");
        }
    }
}
