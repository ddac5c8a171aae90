import Benchmark
import BenchmarkSupport
import Courier
import CourierSchema
import Foundation

/// JSON Schema validation throughput: `userlist.schema.json` over the 5,000-user page, decoded once, beside the
/// JSON decode of the same bytes (the aim: validating costs less than decoding).
let benchmarks: @Sendable () -> Void = {
    let data = BenchmarkSupport.fixture("users_5000.json")
    let bytes = [UInt8](data)
    let codec = JSONCodec()
    let value = try! codec.decode(bytes)
    let schemas = BenchmarkSupport.root.appendingPathComponent("Schemas")
    var registry = SchemaRegistry()
    try! registry.addDirectory(at: schemas)
    let id = "https://courier.example/schemas/userlist.schema.json"
    let schema = try! registry.compile(id: id)
    BenchmarkSupport.check(schema.validate(value).isEmpty, "users_5000.json does not validate")
    var formats = CompiledSchema.Options()
    formats.assertFormat = true
    let strict = try! registry.compile(id: id, options: formats)
    BenchmarkSupport.check(strict.validate(value).isEmpty, "users_5000.json does not validate (assertFormat)")

    let timed = BenchmarkSupport.timed()

    Benchmark("schema.compile userlist Courier", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations {
            var fresh = SchemaRegistry()
            try! fresh.addDirectory(at: schemas)
            blackHole(try! fresh.compile(id: id))
        }
    }
    Benchmark("schema.decode 5000 JSONCodec", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try! codec.decode(bytes)) }
    }
    Benchmark("schema.validate 5000 Courier", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(schema.validate(value)) }
    }
    Benchmark("schema.isValid 5000 Courier", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(schema.isValid(value)) }
    }
    Benchmark("schema.validate.assertFormat 5000 Courier", configuration: timed) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(strict.validate(value)) }
    }
}
