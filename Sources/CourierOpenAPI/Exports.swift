// CourierOpenAPI builds on the Courier core; importing it imports the core too.
@_exported public import Courier
