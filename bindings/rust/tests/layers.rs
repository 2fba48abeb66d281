//! The crate's modules use only lower ones, as libsecbuf's parts do
//! (.ci/layers): `options` only describes an allocation, and each type
//! builds itself from it, so no circle can come back through it.  Read
//! from the sources: every `crate::NAME` of a module outside comments.
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// Each module and the rank above which it may not reach; lib.rs, the
/// root, only declares and re-exports them (and uses any).
const RANKS: &[(&str, u32)] = &[
    ("ffi", 0),
    ("error", 0),
    ("options", 1),
    ("buf", 2),
    ("boxed", 3),
    ("sealed", 4),
];

/// The names a source uses as `crate::NAME` or `crate::{NAME, ...}`.
fn crate_uses(src: &str) -> Vec<String> {
    let mut names = Vec::new();
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for line in src.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (i, _) in line.match_indices("crate::") {
            let rest = &line[i + "crate::".len()..];
            match rest.strip_prefix('{') {
                Some(group) => {
                    let group = group.split('}').next().unwrap_or("");
                    names.extend(group.split(',').map(ident).filter(|n| !n.is_empty()));
                }
                None => names.push(ident(rest)),
            }
        }
    }
    names
}

#[test]
fn modules_use_only_lower_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let ranks: BTreeMap<&str, u32> = RANKS.iter().copied().collect();
    let mut wrong = Vec::new();
    for entry in fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let module = path.file_stem().unwrap().to_str().unwrap().to_string();
        if path.extension().map_or(true, |e| e != "rs") || module == "lib" {
            continue;
        }
        let rank = match ranks.get(module.as_str()) {
            Some(&r) => r,
            None => {
                wrong.push(format!("{}.rs has no rank in tests/layers.rs", module));
                continue;
            }
        };
        for used in crate_uses(&fs::read_to_string(&path).unwrap()) {
            match ranks.get(used.as_str()) {
                Some(&r) if r < rank => {}
                Some(&r) => wrong.push(format!(
                    "{} (rank {}) uses {} (rank {})",
                    module, rank, used, r
                )),
                None => wrong.push(format!(
                    "{} uses crate::{}, of the root: the root uses its modules, never the reverse",
                    module, used
                )),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
