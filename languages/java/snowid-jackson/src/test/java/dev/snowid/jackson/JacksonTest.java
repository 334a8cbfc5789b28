package dev.snowid.jackson;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.snowid.Generator;
import dev.snowid.Ids;
import java.util.List;
import org.junit.jupiter.api.Test;

class JacksonTest {
  record Order(@SnowidId long id, @SnowidId Long parent, int quantity) {}

  record Batch(List<Long> ids) {}

  private final ObjectMapper mapper = new ObjectMapper();

  @Test
  void annotatedIdsAreStringsAndOtherNumbersStayNumbers() throws Exception {
    long id = Generator.builder().build().nextId();
    long big = Ids.parse("18446744073709551615");
    String json = mapper.writeValueAsString(new Order(id, big, 3));
    assertEquals(
        "{\"id\":\""
            + Ids.format(id)
            + "\",\"parent\":\"18446744073709551615\","
            + "\"quantity\":3}",
        json);
    Order back = mapper.readValue(json, Order.class);
    assertEquals(new Order(id, big, 3), back);
  }

  @Test
  void numbersAndMalformedTextAreRefused() {
    assertThrows(
        JsonMappingException.class,
        () -> mapper.readValue("{\"id\":12,\"parent\":\"1\",\"quantity\":1}", Order.class));
    assertThrows(
        JsonMappingException.class,
        () -> mapper.readValue("{\"id\":\"+12\",\"parent\":\"1\",\"quantity\":1}", Order.class));
    assertThrows(
        JsonMappingException.class,
        () ->
            mapper.readValue(
                "{\"id\":\"18446744073709551616\",\"parent\":\"1\",\"quantity\":1}", Order.class));
  }

  @Test
  void theModuleMakesEveryLongAnIdString() throws Exception {
    ObjectMapper ids = new ObjectMapper().registerModule(new SnowidIdsModule());
    String json = ids.writeValueAsString(new Batch(List.of(1L, 9007199254740993L)));
    assertEquals("{\"ids\":[\"1\",\"9007199254740993\"]}", json);
    assertEquals(List.of(1L, 9007199254740993L), ids.readValue(json, Batch.class).ids());
    assertTrue(
        assertThrows(JsonMappingException.class, () -> ids.readValue("{\"ids\":[1]}", Batch.class))
            .getMessage()
            .contains("JSON string"));
  }
}
