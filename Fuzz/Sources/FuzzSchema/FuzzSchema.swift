// libFuzzer entry point for the JSON Schema compiler and evaluator. The input is a schema and an instance,
// both JSON, separated by the first 0x00 byte (without one, the schema is validated against itself); seeds
// live in Fixtures/fuzz/FuzzSchema/.
//
// Properties checked on every input:
// - parsing, registering and compiling either succeed or throw a CourierError, never anything else;
// - validation never crashes, hangs or takes unbounded memory (run.sh saves an input that runs 10 s or takes
//   2 GiB as a finding), whatever the schema: recursion, fan-out, `multipleOf` 1e-300, hostile patterns;
// - the four ways of asking agree: `isValid`, `validate`, `validationOutcome` and `check` give one verdict.
//
// The validation limits are a tenth of the defaults, so that a sanitized build reaches them in well under the
// per-input timeout: a timeout then means work that escapes the limits, not a limit set too high.
import CourierSchema
import Foundation

private let codec: JSONCodec = {
    var options = JSONCodec.Options()
    options.maximumDepth = 128
    return JSONCodec(options: options)
}()

private func schemaOptions(assertFormat: Bool) -> CompiledSchema.Options {
    var options = CompiledSchema.Options()
    options.assertFormat = assertFormat
    options.maximumSteps = 2_000_000
    options.maximumSubschemaEvaluations = 500_000
    return options
}

private func expectCourierError(_ error: any Error, _ stage: String) {
    if !(error is CourierError) { fatalError("\(stage) threw a non-Courier error: \(error)") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let split = bytes.firstIndex(of: 0) ?? size
    let schemaValue: Value
    let instance: Value
    do {
        schemaValue = try codec.decode(bytes[0..<split])
        instance = split < size ? try codec.decode(bytes[(split + 1)...]) : schemaValue
    } catch {
        expectCourierError(error, "JSON decoding")
        return 0
    }
    let compiled: CompiledSchema
    do {
        var registry = SchemaRegistry()
        let uri = try registry.add(schemaValue, uri: "https://courier.example/fuzz/schema.json")
        // The input's length picks format assertion, so both modes get fuzzed.
        compiled = try registry.compile(id: uri, options: schemaOptions(assertFormat: size % 2 == 1))
    } catch {
        expectCourierError(error, "schema compilation")
        return 0
    }
    let valid = compiled.isValid(instance)
    let violations = compiled.validate(instance)
    let outcome = compiled.validationOutcome(instance)
    switch outcome {
    case .valid:
        guard valid, violations.isEmpty else {
            fatalError("validationOutcome says valid, isValid \(valid), validate \(violations.count) violations")
        }
    case .invalid(let found):
        guard !valid, !violations.isEmpty, !found.isEmpty else {
            fatalError("validationOutcome says invalid, isValid \(valid), validate \(violations.count) violations")
        }
    case .gaveUp:
        guard !valid, violations.last?.keyword == CompiledSchema.limitKeyword else {
            fatalError("validationOutcome gave up, isValid \(valid), last violation \(String(describing: violations.last))")
        }
    }
    do {
        try compiled.check(instance)
        if !valid { fatalError("check passed an instance isValid rejects") }
    } catch {
        expectCourierError(error, "check")
        if valid { fatalError("check threw for an instance isValid accepts: \(error)") }
    }
    return 0
}
