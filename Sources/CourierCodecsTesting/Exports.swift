// CourierCodecsTesting is CourierTesting plus generators for the codecs of CourierCodecs (XML on libxml2,
// Protocol Buffers on protobuf-c); importing it imports both, so one import serves a codec's tests.
@_exported public import CourierCodecs
@_exported public import CourierTesting
