package dev.snowid.jackson;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import dev.snowid.Ids;
import java.io.IOException;

/** Writes an id ({@code long} or {@code Long}) as a JSON string of its unsigned decimal digits. */
public final class IdSerializer extends StdSerializer<Long> {
  private static final long serialVersionUID = 1L;

  public IdSerializer() {
    super(Long.class);
  }

  @Override
  public void serialize(Long id, JsonGenerator gen, SerializerProvider provider)
      throws IOException {
    gen.writeString(Ids.format(id));
  }
}
