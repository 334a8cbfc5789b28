package dev.snowid.jackson;

import com.fasterxml.jackson.databind.module.SimpleModule;

/**
 * Writes and reads every {@code long} and {@code Long} of a mapper as an id string. For mappers
 * whose only longs are ids (an API of ids); elsewhere annotate the id members with {@link SnowidId}
 * and leave other numbers alone.
 */
public final class SnowidIdsModule extends SimpleModule {
  private static final long serialVersionUID = 1L;

  public SnowidIdsModule() {
    super("snowid-ids");
    addSerializer(Long.class, new IdSerializer());
    addSerializer(Long.TYPE, new IdSerializer());
    addDeserializer(Long.class, new IdDeserializer());
    addDeserializer(Long.TYPE, new IdDeserializer());
  }
}
