//! What must never compile, kept out for good: a `SecretBox` of a type
//! that some bit patterns make invalid (the zeros of a purge, or of a
//! forked child's wiped pages, would make an invalid value of it), `Pod`
//! implemented outside the crate, a secret copied out without
//! `expose_secret` (`.clone()`, `*boxed`, `to_vec()` and indexing through
//! a `Deref`), and `purge()` outside `unsafe`; a `Sealed` of a type that is
//! not `Pod`, a sealed secret cloned, and the plaintext lent by `with`
//! kept past the closure.
//!
//! Each case is a pair of small library crates compiled by rustc against
//! the secbuf rlib that cargo built for this test: the good one must
//! compile, which shows that the harness, the paths and the names are
//! right; the bad one, a line away, must fail with the expected error code
//! and no other error, so that it fails for the reason it is meant to.
use std::collections::BTreeSet;
use std::env;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The secbuf rlib beside this test's binary (target/debug/deps) that
/// `compiler` made (its `rustc -V` is in the rlib's metadata), the newest
/// if old builds left several: cargo has just built the one this test was
/// linked with.  A wrong one would fail the good twins.
fn secbuf_rlib(compiler: &OsStr, deps: &Path) -> PathBuf {
    let out = Command::new(compiler)
        .arg("-V")
        .output()
        .unwrap_or_else(|e| panic!("running {:?} -V: {}", compiler, e));
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        version.starts_with("rustc "),
        "{:?} -V: {:?}",
        compiler,
        version
    );
    let made_by_it = |p: &Path| {
        let bytes = fs::read(p).unwrap_or_default();
        bytes
            .windows(version.len())
            .any(|w| w == version.as_bytes())
    };
    let mut rlibs: Vec<(std::time::SystemTime, PathBuf)> = fs::read_dir(deps)
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            if !(name.starts_with("libsecbuf-") && name.ends_with(".rlib")) {
                return None;
            }
            Some((e.metadata().ok()?.modified().ok()?, e.path()))
        })
        .filter(|(_, p)| made_by_it(p))
        .collect();
    rlibs.sort();
    match rlibs.pop() {
        Some((_, p)) => p,
        None => panic!("no libsecbuf-*.rlib of {} in {}", version, deps.display()),
    }
}

/// rustc on one library crate (metadata only: type and borrow checking,
/// no code, no link): Ok, or its error output.
fn rustc(name: &str, src: &str) -> Result<(), String> {
    let deps = env::current_exe().unwrap().parent().unwrap().to_path_buf();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compile_fail");
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{}.rs", name));
    fs::write(&file, src).unwrap();
    // The compiler cargo used: RUSTC if set, else the one on PATH (which
    // rustup resolves for this directory as it did for cargo).
    let compiler = env::var_os("RUSTC").unwrap_or_else(|| OsString::from("rustc"));
    let rlib = secbuf_rlib(&compiler, &deps);
    let out = Command::new(&compiler)
        .args([
            "--edition",
            "2021",
            "--crate-type",
            "lib",
            "--emit=metadata",
        ])
        .args(["-A", "warnings", "--crate-name", name, "--out-dir"])
        .arg(&dir)
        .arg("--extern")
        .arg(format!("secbuf={}", rlib.display()))
        .arg("-L")
        .arg(format!("dependency={}", deps.display()))
        .arg(&file)
        .output()
        .unwrap_or_else(|e| panic!("running {:?}: {}", compiler, e));
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// The error codes of rustc's output, and its errors without a code
/// (a syntax error, an unresolved crate) as "?".
fn error_codes(out: &str) -> BTreeSet<String> {
    out.lines()
        .filter_map(|l| {
            if let Some(rest) = l.strip_prefix("error[") {
                return Some(rest.split(']').next().unwrap_or("?").to_string());
            }
            if l.starts_with("error:") && !l.starts_with("error: aborting due to") {
                return Some("?".to_string());
            }
            None
        })
        .collect()
}

const PRELUDE: &str = "#![allow(unused)]\nuse secbuf::*;\n";

/// `bad` must fail with `code` alone, its output naming `about`; `good`,
/// the same crate a line away, must compile.
fn refused(name: &str, good: &str, bad: &str, code: &str, about: &str) {
    let mut wrong = Vec::new();
    match rustc(&format!("{}_bad", name), &format!("{}{}\n", PRELUDE, bad)) {
        Ok(()) => wrong.push(format!("it compiled (expected {}):\n{}", code, bad)),
        Err(out) => {
            let codes = error_codes(&out);
            if codes.len() != 1 || !codes.contains(code) {
                wrong.push(format!(
                    "errors {:?}, expected {} alone:\n{}",
                    codes, code, out
                ));
            } else if !out.contains(about) {
                wrong.push(format!("{} but not about {:?}:\n{}", code, about, out));
            }
        }
    }
    if let Err(out) = rustc(&format!("{}_good", name), &format!("{}{}\n", PRELUDE, good)) {
        wrong.push(format!(
            "its good twin does not compile:\n{}\n{}",
            good, out
        ));
    }
    assert!(wrong.is_empty(), "{}: {}", name, wrong.join("\n---\n"));
}

fn body(lines: &str) -> String {
    format!("pub fn case() {{\n{}\n}}", lines)
}

#[test]
fn control_compiles() {
    let src = body(
        "let mut k = SecretBox::<[u8; 32]>::zeroed().unwrap();
        k.expose_secret_mut()[0] = 1;
        let first: u8 = k.expose_secret()[0];
        let copy: SecretBox<[u8; 32]> = k.try_clone().unwrap();
        let opts = Options::new().packed(true);
        let words = SecretBox::<[u64; 4]>::zeroed_with(&opts).unwrap();
        let _ = SecretBox::<[[u8; 16]; 2]>::from_reader(&mut &[0u8; 32][..]);
        let _ = SecretBox::with_options(&opts, 7u128);
        let _ = SecretBox::new(-1i32);
        let mut b = SecretBuf::with_options(&opts, 32).unwrap();
        b.expose_secret_mut().fill(1);
        let f = b.freeze().unwrap();
        let n: usize = f.expose_secret().len();
        unsafe { purge() };
        let sealed = Sealed::seal(words).unwrap();
        let w: u64 = sealed.with(|v: &[u64; 4]| v[0]).unwrap();
        let opened: SecretBox<[u64; 4]> = sealed.open().unwrap();
        let bytes = SealedBytes::seal(SecretBuf::new(32).unwrap()).unwrap();
        let n: usize = bytes.with(|k| k.len()).unwrap();
        let again = SealedBytes::import(&bytes.export()).unwrap();
        let _ = Sealed::<[u8; 32]>::from_reader(&mut &[0u8; 32][..]);
        seal_rekey().unwrap();",
    );
    if let Err(out) = rustc("control", &format!("{}{}\n", PRELUDE, src)) {
        panic!("the control does not compile:\n{}", out);
    }
}

#[test]
fn secret_box_of_a_reference_does_not_compile() {
    refused(
        "box_of_ref",
        &body("static X: u8 = 7; let b = SecretBox::new(X).unwrap();"),
        &body("static X: u8 = 7; let b = SecretBox::new(&X).unwrap();"),
        "E0277",
        "Pod",
    );
}

#[test]
fn secret_box_of_nonzero_does_not_compile() {
    refused(
        "box_of_nonzero",
        &body("let b = SecretBox::new(7u64).unwrap();"),
        &body("let b = SecretBox::new(std::num::NonZeroU64::new(7).unwrap()).unwrap();"),
        "E0277",
        "Pod",
    );
}

#[test]
fn secret_box_of_bool_does_not_compile() {
    refused(
        "box_of_bool",
        &body("let b = SecretBox::new(1u8).unwrap();"),
        &body("let b = SecretBox::new(true).unwrap();"),
        "E0277",
        "Pod",
    );
}

#[test]
fn secret_box_of_char_does_not_compile() {
    refused(
        "box_of_char",
        &body("let b = SecretBox::new(107u32).unwrap();"),
        &body("let b = SecretBox::new('k').unwrap();"),
        "E0277",
        "Pod",
    );
}

#[test]
fn pod_outside_the_crate_does_not_compile() {
    let keys = "#[derive(Clone, Copy)]\npub struct Keys { pub enc: [u8; 16], pub rotated: bool }\n";
    refused(
        "pod_outside",
        &format!(
            "{}{}",
            keys,
            body("let b = SecretBox::<[u8; 16]>::zeroed();")
        ),
        &format!(
            "{}unsafe impl Pod for Keys {{}}\n{}",
            keys,
            body("let b = SecretBox::<Keys>::zeroed();")
        ),
        "E0277",
        "Sealed",
    );
}

#[test]
fn secret_box_clone_does_not_compile() {
    refused(
        "box_clone",
        &body("let k = SecretBox::<[u8; 32]>::zeroed().unwrap(); let c = k.try_clone().unwrap();"),
        &body("let k = SecretBox::<[u8; 32]>::zeroed().unwrap(); let c = k.clone();"),
        "E0599",
        "clone",
    );
}

#[test]
fn secret_box_deref_does_not_compile() {
    refused(
        "box_deref",
        &body("let k = SecretBox::<[u8; 32]>::zeroed().unwrap(); let v: &[u8; 32] = k.expose_secret();"),
        &body("let k = SecretBox::<[u8; 32]>::zeroed().unwrap(); let v: [u8; 32] = *k;"),
        "E0614",
        "cannot be dereferenced",
    );
}

#[test]
fn secret_buf_to_vec_does_not_compile() {
    refused(
        "buf_to_vec",
        &body("let b = SecretBuf::new(32).unwrap(); let n = b.expose_secret().len();"),
        &body("let b = SecretBuf::new(32).unwrap(); let v = b.to_vec();"),
        "E0599",
        "to_vec",
    );
}

#[test]
fn secret_buf_index_does_not_compile() {
    refused(
        "buf_index",
        &body("let b = SecretBuf::new(32).unwrap(); let s: &[u8] = b.expose_secret();"),
        &body("let b = SecretBuf::new(32).unwrap(); let s: &[u8] = &b[..];"),
        "E0608",
        "cannot index",
    );
}

#[test]
fn frozen_buf_to_vec_does_not_compile() {
    refused(
        "frozen_to_vec",
        &body("let f = SecretBuf::new(32).unwrap().freeze().unwrap(); let n = f.expose_secret().len();"),
        &body("let f = SecretBuf::new(32).unwrap().freeze().unwrap(); let v = f.to_vec();"),
        "E0599",
        "to_vec",
    );
}

#[test]
fn purge_outside_unsafe_does_not_compile() {
    refused(
        "purge_safe",
        &body("unsafe { purge() };"),
        &body("purge();"),
        "E0133",
        "unsafe",
    );
}

#[test]
fn sealed_of_bool_does_not_compile() {
    refused(
        "sealed_of_bool",
        "pub fn keep(s: Sealed<u8>) {}",
        "pub fn keep(s: Sealed<bool>) {}",
        "E0277",
        "Pod",
    );
}

#[test]
fn sealed_clone_does_not_compile() {
    refused(
        "sealed_clone",
        &body("let k = SealedBytes::seal(SecretBuf::new(32).unwrap()).unwrap(); let c = SealedBytes::import(&k.export());"),
        &body("let k = SealedBytes::seal(SecretBuf::new(32).unwrap()).unwrap(); let c = k.clone();"),
        "E0599",
        "clone",
    );
}

/// rustc gives this error no code: "?" (error_codes), and its words.
#[test]
fn sealed_plaintext_kept_past_with_does_not_compile() {
    refused(
        "sealed_with_leak",
        &body("let k = SealedBytes::seal(SecretBuf::new(32).unwrap()).unwrap(); let b: u8 = k.with(|b| b[0]).unwrap();"),
        &body("let k = SealedBytes::seal(SecretBuf::new(32).unwrap()).unwrap(); let b: &[u8] = k.with(|b| b).unwrap();"),
        "?",
        "lifetime may not live long enough",
    );
    refused(
        "sealed_value_with_leak",
        &body("let k = Sealed::<[u8; 32]>::from_reader(&mut &[0u8; 32][..]).unwrap(); let v = k.with(|v: &[u8; 32]| v[0]).unwrap();"),
        &body("let k = Sealed::<[u8; 32]>::from_reader(&mut &[0u8; 32][..]).unwrap(); let v = k.with(|v: &[u8; 32]| v).unwrap();"),
        "?",
        "lifetime may not live long enough",
    );
}
