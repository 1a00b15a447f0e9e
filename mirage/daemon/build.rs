// The dashboard's build output is embedded (rust-embed): rebuild when it
// changes (Vite recreates the directory on every build).
fn main() {
    println!("cargo:rerun-if-changed=../dashboard/web/dist");
    println!("cargo:rerun-if-changed=../dashboard/web/dist/index.html");
}
