//! Where libsecbuf comes from.  SECBUF_LIB_DIR (a directory holding
//! libsecbuf.a, as the tree's build/lib does) links that archive
//! statically: the tests and benchmark use the library they were built
//! with, and no LD_LIBRARY_PATH is needed.  Otherwise the installed
//! library, as `pkg-config secbuf` describes it; plain `-lsecbuf` when
//! pkg-config is missing or does not know secbuf.
use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=SECBUF_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    if let Some(dir) = env::var_os("SECBUF_LIB_DIR") {
        let dir = dir.to_string_lossy().into_owned();
        println!("cargo:rerun-if-changed={}/libsecbuf.a", dir);
        println!("cargo:rustc-link-search=native={}", dir);
        println!("cargo:rustc-link-lib=static=secbuf");
        // libsecbuf.a's own needs (secbuf.pc's Libs.private).
        println!("cargo:rustc-link-lib=dylib=pthread");
        return;
    }
    match Command::new("pkg-config")
        .args(["--libs", "secbuf"])
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
            println!("cargo:warning=pkg-config does not know secbuf; linking -lsecbuf from the default paths (set SECBUF_LIB_DIR for a built tree)");
            println!("cargo:rustc-link-lib=secbuf");
        }
    }
}
