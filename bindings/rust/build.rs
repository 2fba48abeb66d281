//! Where libsecbuf and libsecbuf-seal come from.  SECBUF_LIB_DIR (a
//! directory holding libsecbuf-seal.a and libsecbuf.a, as the tree's
//! build/lib does) links those archives statically, and libsodium, which
//! libsecbuf-seal needs, from the system: the tests and benchmark use the
//! libraries they were built with, and no LD_LIBRARY_PATH is needed.
//! Otherwise the installed libraries, as `pkg-config secbuf-seal`
//! describes them (it requires secbuf; libsecbuf-seal.so names libsodium
//! itself); plain `-lsecbuf-seal -lsecbuf` when pkg-config is missing or
//! does not know secbuf-seal.  A program that uses no sealed secret gets
//! neither libsecbuf-seal nor libsodium: nothing of the archive is
//! linked, and rustc links shared libraries --as-needed.
use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=SECBUF_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    if let Some(dir) = env::var_os("SECBUF_LIB_DIR") {
        let dir = dir.to_string_lossy().into_owned();
        println!("cargo:rerun-if-changed={}/libsecbuf.a", dir);
        println!("cargo:rerun-if-changed={}/libsecbuf-seal.a", dir);
        println!("cargo:rustc-link-search=native={}", dir);
        // libsecbuf-seal.a first: it calls into libsecbuf.a.
        println!("cargo:rustc-link-lib=static=secbuf-seal");
        println!("cargo:rustc-link-lib=static=secbuf");
        // Their own needs (secbuf-seal.pc's Requires.private, secbuf.pc's
        // Libs.private).
        println!("cargo:rustc-link-lib=sodium");
        println!("cargo:rustc-link-lib=dylib=pthread");
        return;
    }
    match Command::new("pkg-config")
        .args(["--libs", "secbuf-seal"])
        .output()
    {
        Ok(out) if out.status.success() => {
            for flag in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                if let Some(dir) = flag.strip_prefix("-L") {
                    println!("cargo:rustc-link-search=native={}", dir);
                } else if let Some(lib) = flag.strip_prefix("-l") {
                    println!("cargo:rustc-link-lib={}", lib);
                }
            }
        }
        _ => {
            println!("cargo:warning=pkg-config does not know secbuf-seal; linking -lsecbuf-seal -lsecbuf from the default paths (set SECBUF_LIB_DIR for a built tree)");
            println!("cargo:rustc-link-lib=secbuf-seal");
            println!("cargo:rustc-link-lib=secbuf");
        }
    }
}
