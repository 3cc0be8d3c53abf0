// Swagger UI over this server's own document. validatorUrl null: the UI would otherwise send the
// document to an outside validator for its badge.
window.addEventListener("load", () => {
  window.ui = SwaggerUIBundle({
    url: new URL("../openapi.json", window.location.href).href,
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
