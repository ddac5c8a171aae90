// The HTTP types of Courier's public API (swift-http-types), re-exported so that `import Courier` is all an app
// writes to build requests, read responses and set header fields.
@_exported @_documentation(visibility: internal) public import struct HTTPTypes.HTTPField
@_exported @_documentation(visibility: internal) public import struct HTTPTypes.HTTPFields
@_exported @_documentation(visibility: internal) public import struct HTTPTypes.HTTPRequest
@_exported @_documentation(visibility: internal) public import struct HTTPTypes.HTTPResponse
