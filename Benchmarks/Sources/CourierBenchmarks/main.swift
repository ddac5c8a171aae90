// Usage: CourierBenchmarks [group ...]   groups: chain json xml protobuf schema hostile (default: all)
let groups: [(String, @Sendable (inout Harness) throws -> Void)] = [
    ("json", JSONBenchmarks.run),
    ("schema", SchemaBenchmarks.run),
    ("xml", XMLBenchmarks.run),
    ("protobuf", ProtobufBenchmarks.run),
    ("hostile", HostileBenchmarks.run),
]

@MainActor func runBenchmarks() async throws {
    let requested = Set(CommandLine.arguments.dropFirst())
    var harness = Harness()
    if requested.isEmpty || requested.contains("chain") {
        print("== chain")
        try await ChainBenchmarks.run(&harness)
    }
    for (name, run) in groups where requested.isEmpty || requested.contains(name) {
        print("== \(name)")
        try run(&harness)
    }
    print(String(format: "peak memory (VmHWM): %.1f MiB", peakMemoryMiB()))
}

try await runBenchmarks()
