// NOT COMPILED HERE (see ../README.md): one screen, no logic.
import SwiftUI

struct ContentView: View {
    @Bindable var model: RelayAppModel

    var body: some View {
        Form {
            Section("Glasses") { Text(model.glasses) }
            Section("Bridge (glasses-bridge --listen)") {
                TextField("Host", text: $model.host).textInputAutocapitalization(.never)
                TextField("Port", text: $model.port).keyboardType(.numberPad)
                SecureField("Pairing token", text: $model.token)
            }
            Section("Relay") {
                Text(model.status)
                Text("Frames to the bridge: \(model.framesSent)")
                Button(model.isRunning ? "Stop" : "Start") {
                    model.isRunning ? model.stop() : model.start()
                }
            }
        }
    }
}
