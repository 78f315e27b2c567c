{
  # nix run github:zotero-mcp/zotero-mcp          serve MCP on stdio
  # nix build                                      static (musl) binary in ./result/bin
  # nix build .#image && docker load < result     the OCI image (Linux only)
  # nix flake check                                the test suite, clippy, rustfmt
  # nix develop                                    toolchain, clippy, rustfmt, musl, packaging tools
  description = "MCP server giving AI agents safe, structured access to a Zotero library";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs =
    { self, nixpkgs }:
    let
      # The GitHub owner: the one place to change it in this file. It must agree with
      # `repository` in Cargo.toml (crates/zotero-mcp/tests/it/registry.rs checks that).
      owner = "zotero-mcp";

      # A workspace: the version is the workspace's, the name and description the server's.
      cargoToml = builtins.fromTOML (builtins.readFile ./crates/zotero-mcp/Cargo.toml);
      workspaceToml = builtins.fromTOML (builtins.readFile ./Cargo.toml);
      pname = cargoToml.package.name;
      version = workspaceToml.workspace.package.version;

      systems = [
        "x86_64-linux"
        "aarch64-linux"
        "x86_64-darwin"
        "aarch64-darwin"
      ];
      forAllSystems = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});

      # Only what the build and the tests read (tests/it/registry.rs reads the packaging files,
      # tests/it/docs.rs the README, CONTRIBUTING.md and docs/).
      src = nixpkgs.lib.fileset.toSource {
        root = ./.;
        fileset = nixpkgs.lib.fileset.unions [
          ./Cargo.toml
          ./Cargo.lock
          # [env] LIBSQLITE3_FLAGS: the bundled SQLite's build flags (a test checks them).
          ./.cargo/config.toml
          ./rustfmt.toml
          ./README.md
          ./CONTRIBUTING.md
          ./docs
          ./crates
          ./fixtures
          ./registry
          ./Dockerfile.scratch
          ./flake.nix
        ];
      };

      revision = self.rev or self.dirtyRev or "dirty";

      labels = {
        "org.opencontainers.image.title" = pname;
        "org.opencontainers.image.description" = "MCP server (stdio) giving AI agents safe, structured access to a Zotero library";
        "org.opencontainers.image.source" = "https://github.com/${owner}/${pname}";
        "org.opencontainers.image.url" = "https://github.com/${owner}/${pname}";
        "org.opencontainers.image.licenses" = "MIT";
        "org.opencontainers.image.version" = version;
        "org.opencontainers.image.revision" = revision;
        "io.modelcontextprotocol.server.name" = "io.github.${owner}/${pname}";
      };

      # On Linux a fully static musl binary (pkgsStatic); elsewhere the platform's normal build.
      rustPlatformFor =
        pkgs: if pkgs.stdenv.hostPlatform.isLinux then pkgs.pkgsStatic.rustPlatform else pkgs.rustPlatform;

      mkZoteroMcp =
        pkgs:
        { doCheck ? false }:
        (rustPlatformFor pkgs).buildRustPackage {
          inherit pname version src doCheck;
          cargoLock.lockFile = ./Cargo.lock;
          # Unwinding stays on (the release profile of Cargo.toml: lto, codegen-units=1, strip).
          checkType = "debug";
          meta = {
            description = cargoToml.package.description;
            homepage = "https://github.com/${owner}/${pname}";
            license = pkgs.lib.licenses.mit;
            mainProgram = pname;
            platforms = pkgs.lib.platforms.unix;
          };
        };
    in
    {
      packages = forAllSystems (
        pkgs:
        let
          zotero-mcp = mkZoteroMcp pkgs { };
        in
        {
          default = zotero-mcp;
          inherit zotero-mcp;
        }
        // pkgs.lib.optionalAttrs pkgs.stdenv.hostPlatform.isLinux {
          # Same layout as Dockerfile.scratch: /zotero-mcp and nothing else, user 65532.
          image = pkgs.dockerTools.buildImage {
            name = "ghcr.io/${owner}/${pname}";
            tag = version;
            copyToRoot = pkgs.runCommand "${pname}-root" { } ''
              mkdir -p $out
              cp ${zotero-mcp}/bin/${pname} $out/${pname}
            '';
            config = {
              Entrypoint = [ "/${pname}" ];
              User = "65532:65532";
              Labels = labels;
            };
          };
        }
      );

      apps = forAllSystems (pkgs: {
        default = {
          type = "app";
          program = "${self.packages.${pkgs.stdenv.hostPlatform.system}.default}/bin/${pname}";
        };
      });

      checks = forAllSystems (pkgs: {
        # The whole test suite (cargo test) against the static build.
        tests = mkZoteroMcp pkgs { doCheck = true; };

        # Lints with the platform's normal toolchain (clippy matches its rustc).
        clippy = pkgs.rustPlatform.buildRustPackage {
          pname = "${pname}-clippy";
          inherit version src;
          cargoLock.lockFile = ./Cargo.lock;
          nativeBuildInputs = [ pkgs.clippy ];
          buildPhase = ''
            runHook preBuild
            cargo clippy --all-targets --locked --offline -- -D warnings
            runHook postBuild
          '';
          doCheck = false;
          installPhase = "touch $out";
        };

        rustfmt =
          pkgs.runCommand "${pname}-rustfmt"
            {
              nativeBuildInputs = [
                pkgs.cargo
                pkgs.rustfmt
              ];
            }
            ''
              cd ${src}
              cargo fmt --all --check
              touch $out
            '';
      });

      devShells = forAllSystems (pkgs: {
        default = pkgs.mkShell {
          packages =
            [
              pkgs.cargo
              pkgs.rustc
              pkgs.clippy
              pkgs.rustfmt
              pkgs.rust-analyzer
              pkgs.python3
              pkgs.file
              pkgs.actionlint
            ]
            ++ pkgs.lib.optionals pkgs.stdenv.hostPlatform.isLinux [
              pkgs.musl # musl-gcc, for `cargo build --target x86_64-unknown-linux-musl` with rustup
              pkgs.buildah
              pkgs.umoci
            ];
        };
      });
    };
}
