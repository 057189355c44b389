//! Generates the Rust code of the `knobel.v1` contract without a system `protoc`:
//! protox parses and checks `knobel/v1/*.proto` into a file descriptor set, which
//! tonic-prost-build turns into prost messages and a tonic server and client (and, for the
//! arena, a second server half whose Play stream sends `outbound::OutboundMessage`). The
//! encoded descriptor set is written next to the code for gRPC server reflection.

use std::path::PathBuf;

const PROTOS: &[&str] = &["knobel/v1/arena.proto", "knobel/peer/v1/peer.proto"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    for proto in PROTOS {
        println!("cargo:rerun-if-changed={proto}");
    }

    let mut compiler = protox::Compiler::new(["."])?;
    // Comments become the generated code's documentation; reflection clients see them too.
    compiler.include_source_info(true).include_imports(true);
    compiler.open_files(PROTOS)?;
    std::fs::write(
        out_dir.join("knobel_v1_descriptor.bin"),
        compiler.encode_file_descriptor_set(),
    )?;

    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        // No `connect` helpers: they would tie this crate to tonic's transport feature.
        .build_transport(false)
        .emit_rerun_if_changed(false)
        // A relayed seat's message is forwarded as it is: no copy.
        .bytes(".knobel.peer.v1.SeatMessage.arena_message")
        .compile_fds(compiler.file_descriptor_set())?;

    // The arena's own server half of the same services: identical, except that its Play
    // stream sends `outbound::OutboundMessage` (an ArenaMessage whose events are encoded
    // once per match and shared by every seat) instead of `v1::ArenaMessage`. Every other
    // type is the `v1` one; no message is generated again.
    let outbound_dir = out_dir.join("outbound");
    std::fs::create_dir_all(&outbound_dir)?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(false)
        .build_transport(false)
        .emit_rerun_if_changed(false)
        .extern_path(".knobel.v1", "crate::v1")
        .extern_path(
            ".knobel.v1.ArenaMessage",
            "crate::outbound::OutboundMessage",
        )
        .out_dir(&outbound_dir)
        .compile_fds(compiler.file_descriptor_set())?;
    Ok(())
}
