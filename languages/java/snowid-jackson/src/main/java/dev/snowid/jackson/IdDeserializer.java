package dev.snowid.jackson;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import dev.snowid.Ids;
import dev.snowid.SnowidException;
import java.io.IOException;

/**
 * Reads an id from a JSON string, strictly ({@link Ids#parse}). A JSON number is refused: ids
 * travel as strings, and a number above 2^53 may already have lost digits in its writer.
 */
public final class IdDeserializer extends StdDeserializer<Long> {
  private static final long serialVersionUID = 1L;

  public IdDeserializer() {
    super(Long.class);
  }

  @Override
  public Long deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
    if (p.currentToken() != JsonToken.VALUE_STRING) {
      return (Long)
          ctxt.handleUnexpectedToken(
              Long.class,
              p.currentToken(),
              p,
              "a snowid id is a JSON string of decimal digits, not %s",
              p.currentToken());
    }
    String text = p.getText();
    try {
      return Ids.parse(text);
    } catch (SnowidException e) {
      return (Long) ctxt.handleWeirdStringValue(Long.class, text, "%s", e.getMessage());
    }
  }
}
